// Stream-ordered allocation over the vGPU's ordinary allocations (see
// guest_cuda.h): MEM_ALLOC and MEM_FREE, so the VMM counts every byte
// against the VM's quota and frees it at RESET. Pools live here, each
// device's default one and those the program makes, holding what the driver
// reports about a pool; a device's current pool is what cuMemAllocAsync uses.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/graph_nodes.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

struct CUmemPoolHandle_st {
    CUdevice device;
    bool reuse[3]; // FOLLOW_EVENT_DEPENDENCIES, ALLOW_OPPORTUNISTIC, ALLOW_INTERNAL_DEPENDENCIES
    cuuint64_t release_threshold;
    cuuint64_t used, used_high;
    uint32_t peers; // devices given read-write access (bit per ordinal)
};

namespace {

constexpr int kMaxPoolDevices = 32;
constexpr int kMaxMadePools = 64;
// Default pools first (one per device ordinal), then the pools made.
CUmemPoolHandle_st g_pools[kMaxPoolDevices + kMaxMadePools];
bool g_pool_ready[kMaxPoolDevices + kMaxMadePools];
CUmemoryPool g_current[kMaxPoolDevices]; // nullptr: the device's default pool

bool device_ordinal(CUdevice dev)
{
    int count = 0;
    return cuDeviceGetCount(&count) == CUDA_SUCCESS && dev >= 0 && dev < count && dev < kMaxPoolDevices;
}

CUresult pool_of_device(CUdevice dev, CUmemoryPool* out)
{
    if (CUresult r = ready())
        return r;
    if (!device_ordinal(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    if (!g_pool_ready[dev]) {
        g_pools[dev] = CUmemPoolHandle_st{dev, {true, true, true}, 0, 0, 0, 0};
        g_pool_ready[dev] = true;
    }
    *out = &g_pools[dev];
    return CUDA_SUCCESS;
}

bool known(CUmemoryPool pool)
{
    const uintptr_t p = reinterpret_cast<uintptr_t>(pool), first = reinterpret_cast<uintptr_t>(&g_pools[0]);
    if (p < first || (p - first) % sizeof g_pools[0] != 0 || (p - first) / sizeof g_pools[0] >= sizeof g_pools / sizeof g_pools[0])
        return false;
    return g_pool_ready[(p - first) / sizeof g_pools[0]];
}

bool is_default(CUmemoryPool pool) { return pool < &g_pools[kMaxPoolDevices]; }

// The device pools of a CUDA 13 location: device memory only.
CUresult location_device(const CUmemLocation* location, CUmemAllocationType type, CUdevice* dev)
{
    if (location == nullptr || type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (location->type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_NOT_SUPPORTED; // host memory pools are not offered
    *dev = location->id;
    return CUDA_SUCCESS;
}

template <typename Then>
CUresult at_location(const CUmemLocation* location, CUmemAllocationType type, Then then)
{
    CUdevice dev = 0;
    if (CUresult r = location_device(location, type, &dev))
        return r;
    return then(dev);
}

// The stream is one of the current context's (a query checks the handle).
CUresult check_stream(CUstream stream)
{
    Call c = command<VGPU_OP_STREAM_QUERY>({stream_arg(stream)});
    const CUresult r = call_sync(c);
    return r == CUDA_ERROR_NOT_READY ? CUDA_SUCCESS : r;
}

// Device `dev`'s primary context reaches (or no longer reaches) the pool
// device's memory.
CUresult set_peer_access(CUdevice dev, CUdevice pool_dev, bool enable)
{
    CUcontext mine = nullptr, theirs = nullptr;
    if (CUresult r = cuDevicePrimaryCtxRetain(&mine, dev)) // kept retained while access is given
        return r;
    if (CUresult r = cuDevicePrimaryCtxRetain(&theirs, pool_dev))
        return r;
    if (CUresult r = cuCtxPushCurrent(mine))
        return r;
    CUresult r = enable ? cuCtxEnablePeerAccess(theirs, 0) : cuCtxDisablePeerAccess(theirs);
    if (r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED || r == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
        r = CUDA_SUCCESS;
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
    return r;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuDeviceGetDefaultMemPool, 11020);
extern "C" CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice dev)
{
    GUEST_API_LOCK();
    if (pool == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    return pool_of_device(dev, pool);
}

KVMGPU_DRIVER_ENTRY(cuDeviceGetMemPool, 11020);
extern "C" CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev)
{
    GUEST_API_LOCK();
    if (CUresult r = cuDeviceGetDefaultMemPool(pool, dev))
        return r;
    if (g_current[dev] != nullptr)
        *pool = g_current[dev];
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuDeviceSetMemPool, 11020);
extern "C" CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (!device_ordinal(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    if (!known(pool) || pool->device != dev)
        return CUDA_ERROR_INVALID_VALUE;
    g_current[dev] = is_default(pool) ? nullptr : pool;
    return CUDA_SUCCESS;
}

// A pool of device memory. Pools whose allocations other processes could
// import (handle types) are not offered: a guest has no other processes on
// this GPU to share with.
KVMGPU_DRIVER_ENTRY(cuMemPoolCreate, 11020);
extern "C" CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props)
{
    GUEST_API_LOCK();
    if (pool == nullptr || props == nullptr || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = ready())
        return r;
    if (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->handleTypes != CU_MEM_HANDLE_TYPE_NONE)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (!device_ordinal(props->location.id))
        return CUDA_ERROR_INVALID_DEVICE;
    for (int i = kMaxPoolDevices; i < kMaxPoolDevices + kMaxMadePools; ++i) {
        if (g_pool_ready[i] || g_pools[i].used != 0) // a destroyed pool's slot waits for its allocations
            continue;
        g_pools[i] = CUmemPoolHandle_st{props->location.id, {true, true, true}, 0, 0, 0, 0};
        g_pool_ready[i] = true;
        *pool = &g_pools[i];
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

// Its allocations stay valid until freed, as with the driver.
KVMGPU_DRIVER_ENTRY(cuMemPoolDestroy, 11020);
extern "C" CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    GUEST_API_LOCK();
    if (!known(pool) || is_default(pool))
        return CUDA_ERROR_INVALID_VALUE;
    if (g_current[pool->device] == pool)
        g_current[pool->device] = nullptr;
    g_pool_ready[pool - g_pools] = false;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuMemGetDefaultMemPool, 13000);
extern "C" CUresult cuMemGetDefaultMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type)
{
    GUEST_API_LOCK();
    return at_location(location, type, [&](CUdevice dev) { return cuDeviceGetDefaultMemPool(pool, dev); });
}

KVMGPU_DRIVER_ENTRY(cuMemGetMemPool, 13000);
extern "C" CUresult cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location, CUmemAllocationType type)
{
    GUEST_API_LOCK();
    return at_location(location, type, [&](CUdevice dev) { return cuDeviceGetMemPool(pool, dev); });
}

KVMGPU_DRIVER_ENTRY(cuMemSetMemPool, 13000);
extern "C" CUresult cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type, CUmemoryPool pool)
{
    GUEST_API_LOCK();
    return at_location(location, type, [&](CUdevice dev) { return cuDeviceSetMemPool(dev, pool); });
}

KVMGPU_DRIVER_ENTRY(cuMemAllocFromPoolAsync, 11020);
extern "C" CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream stream)
{
    GUEST_API_LOCK();
    if (dptr == nullptr || bytes == 0 || !known(pool))
        return CUDA_ERROR_INVALID_VALUE;
    CUdevice dev = 0;
    if (CUresult r = cuCtxGetDevice(&dev))
        return r;
    if (dev != pool->device)
        return CUDA_ERROR_NOT_SUPPORTED; // a pool of another device: allocate with its context current
    if (capture_of(stream) != 0)
        return graph_allocation_captured(dptr, bytes, stream);
    if (CUresult r = check_stream(stream))
        return r;
    Call c = command<VGPU_OP_MEM_ALLOC>({bytes});
    if (CUresult r = call_result(c, dptr))
        return r;
    allocation_add(*dptr, bytes, pool);
    pool->used += bytes;
    if (pool->used > pool->used_high)
        pool->used_high = pool->used;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuMemAllocAsync, 11020);
extern "C" CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytes, CUstream stream)
{
    GUEST_API_LOCK();
    if (dptr == nullptr || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUdevice dev = 0;
    CUmemoryPool pool = nullptr;
    if (CUresult r = cuCtxGetDevice(&dev))
        return r;
    if (CUresult r = cuDeviceGetMemPool(&pool, dev))
        return r;
    return cuMemAllocFromPoolAsync(dptr, bytes, pool, stream);
}

// Any allocation may be freed so (also cuMemAlloc's, as with the driver).
KVMGPU_DRIVER_ENTRY(cuMemFreeAsync, 11020);
extern "C" CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
    GUEST_API_LOCK();
    if (dptr == 0)
        return ready(); // nothing to free, as cuMemFree(0)
    if (graph_allocation(dptr))
        return graph_allocation_free(dptr, stream);
    uint64_t bytes = 0;
    CUmemoryPool pool = nullptr;
    if (!allocation_find(dptr, &bytes, &pool))
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = cuStreamSynchronize(stream))
        return r;
    if (CUresult r = cuMemFree(dptr))
        return r;
    if (pool != nullptr)
        pool->used -= bytes < pool->used ? bytes : pool->used;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuMemPoolSetAttribute, 11020);
extern "C" CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value)
{
    GUEST_API_LOCK();
    if (!known(pool) || value == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        pool->reuse[attr - 1] = *static_cast<const int*>(value) != 0;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        pool->release_threshold = *static_cast<const cuuint64_t*>(value);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        // Only a reset to 0 is allowed, which brings the mark down to now.
        if (*static_cast<const cuuint64_t*>(value) != 0)
            return CUDA_ERROR_INVALID_VALUE;
        pool->used_high = pool->used;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

// Reserved memory is what is in use: nothing is kept past a free.
KVMGPU_DRIVER_ENTRY(cuMemPoolGetAttribute, 11020);
extern "C" CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value)
{
    GUEST_API_LOCK();
    if (!known(pool) || value == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *static_cast<int*>(value) = pool->reuse[attr - 1] ? 1 : 0;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *static_cast<cuuint64_t*>(value) = pool->release_threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *static_cast<cuuint64_t*>(value) = pool->used; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *static_cast<cuuint64_t*>(value) = pool->used_high; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

// Nothing is held past what is in use: there is nothing to trim.
KVMGPU_DRIVER_ENTRY(cuMemPoolTrimTo, 11020);
extern "C" CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t)
{
    GUEST_API_LOCK();
    return known(pool) ? ready() : CUDA_ERROR_INVALID_VALUE;
}

KVMGPU_DRIVER_ENTRY(cuMemPoolSetAccess, 11020);
extern "C" CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count)
{
    GUEST_API_LOCK();
    if (!known(pool) || (map == nullptr && count > 0))
        return CUDA_ERROR_INVALID_VALUE;
    int devices = 0;
    if (CUresult r = cuDeviceGetCount(&devices))
        return r;
    for (size_t i = 0; i < count; ++i) {
        const CUmemAccessDesc& d = map[i];
        if (d.location.type != CU_MEM_LOCATION_TYPE_DEVICE || d.location.id < 0 || d.location.id >= devices ||
            d.location.id >= kMaxPoolDevices)
            return CUDA_ERROR_INVALID_VALUE;
        const bool rw = d.flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if (!rw && d.flags != CU_MEM_ACCESS_FLAGS_PROT_NONE)
            return CUDA_ERROR_NOT_SUPPORTED; // read-only peer mappings are not offered
        if (d.location.id == pool->device) {
            if (!rw)
                return CUDA_ERROR_INVALID_DEVICE; // the owner always has access
            continue;
        }
        if (CUresult r = set_peer_access(d.location.id, pool->device, rw))
            return r;
        const uint32_t bit = 1u << d.location.id;
        pool->peers = rw ? pool->peers | bit : pool->peers & ~bit;
    }
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuMemPoolGetAccess, 11020);
extern "C" CUresult cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool pool, CUmemLocation* location)
{
    GUEST_API_LOCK();
    if (flags == nullptr || location == nullptr || !known(pool) || location->type != CU_MEM_LOCATION_TYPE_DEVICE ||
        location->id < 0 || location->id >= kMaxPoolDevices)
        return CUDA_ERROR_INVALID_VALUE;
    const bool rw = location->id == pool->device || (pool->peers & (1u << location->id)) != 0;
    *flags = rw ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return CUDA_SUCCESS;
}
