// The Driver API's virtual memory management: reserve addresses, create
// physical memory, map it, set access. Each call is one VGPU_OP_VMM_*
// command; the vGPU checks granules, ranges and handles for the VM and
// counts physical memory against its quota. A range with access set is
// device memory of this guest's for cuMemcpy and cuMemset (the allocation
// list), until it is unmapped.
#include "guest-stub/platform/api_lock.h"
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"

using namespace guest::cuda;

namespace {

// Pinned device memory of the current context's device (of_current_context;
// else of any device), no export handle, compressible or not: what the vGPU offers.
CUresult prop_ok(const CUmemAllocationProp* prop, bool of_current_context = true)
{
    if (prop == nullptr || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        (prop->allocFlags.compressionType != CU_MEM_ALLOCATION_COMP_NONE &&
         prop->allocFlags.compressionType != CU_MEM_ALLOCATION_COMP_GENERIC))
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE || prop->win32HandleMetaData != nullptr)
        return CUDA_ERROR_NOT_SUPPORTED; // IPC handles: not offered
    if (!of_current_context) { // as the driver: a question about a device needs no context
        int count = 0;
        if (CUresult r = cuDeviceGetCount(&count))
            return r;
        return prop->location.id >= 0 && prop->location.id < count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
    }
    CUdevice dev;
    if (CUresult r = cuCtxGetDevice(&dev))
        return r;
    return prop->location.id == dev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

// What each physical handle of this guest was made as, for
// cuMemGetAllocationPropertiesFromHandle; a handle past the table's room is
// not known here (NOT_SUPPORTED).
struct PhysicalMemory {
    uint64_t handle; // 0: a free entry
    CUdevice device;
    bool compressible;
};
constexpr unsigned kKeptHandles = 256;
PhysicalMemory g_physical[kKeptHandles];

PhysicalMemory* physical(uint64_t handle)
{
    for (PhysicalMemory& p : g_physical)
        if (handle != 0 && p.handle == handle)
            return &p;
    return nullptr;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuMemGetAllocationGranularity, 10020);
extern "C" CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                                  CUmemAllocationGranularity_flags option)
{
    GUEST_API_LOCK();
    if (granularity == nullptr || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
                                   option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = prop_ok(prop, false))
        return r;
    uint64_t g = 0;
    CUresult r = call<VGPU_OP_VMM_GRANULARITY>({static_cast<uint64_t>(prop->location.id)}, &g);
    if (r == CUDA_SUCCESS)
        *granularity = g;
    return r;
}

KVMGPU_DRIVER_ENTRY(cuMemAddressReserve, 10020);
extern "C" CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                        unsigned long long flags)
{
    GUEST_API_LOCK();
    if (ptr == nullptr || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t va = 0;
    CUresult r = call<VGPU_OP_VMM_RESERVE>({size, alignment, addr}, &va);
    if (r == CUDA_SUCCESS)
        *ptr = va;
    return r;
}

KVMGPU_DRIVER_ENTRY(cuMemAddressFree, 10020);
extern "C" CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    GUEST_API_LOCK();
    return call<VGPU_OP_VMM_FREE_RESERVATION>({ptr, size});
}

KVMGPU_DRIVER_ENTRY(cuMemCreate, 10020);
extern "C" CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                                unsigned long long flags)
{
    GUEST_API_LOCK();
    if (handle == nullptr || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = prop_ok(prop))
        return r;
    const bool compress = prop->allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC;
    Call c = command<VGPU_OP_VMM_CREATE>({size, compress ? 1u : 0u});
    uint64_t res[2] = {};
    if (CUresult r = call_sync(c, res))
        return r;
    *handle = res[0];
    for (PhysicalMemory& p : g_physical)
        if (p.handle == 0) {
            p = PhysicalMemory{res[0], prop->location.id, res[1] != 0};
            break;
        }
    return CUDA_SUCCESS;
}

// What the handle was made as: the device, and compression as the driver granted it.
KVMGPU_DRIVER_ENTRY(cuMemGetAllocationPropertiesFromHandle, 10020);
extern "C" CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle)
{
    GUEST_API_LOCK();
    if (prop == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const PhysicalMemory* p = physical(handle);
    if (p == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *prop = CUmemAllocationProp{};
    prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop->location = CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, p->device};
    prop->allocFlags.compressionType = p->compressible ? CU_MEM_ALLOCATION_COMP_GENERIC : CU_MEM_ALLOCATION_COMP_NONE;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuMemRelease, 10020);
extern "C" CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    GUEST_API_LOCK();
    const CUresult r = call<VGPU_OP_VMM_RELEASE>({handle});
    if (r == CUDA_SUCCESS)
        if (PhysicalMemory* p = physical(handle))
            p->handle = 0;
    return r;
}

KVMGPU_DRIVER_ENTRY(cuMemMap, 10020);
extern "C" CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                             unsigned long long flags)
{
    GUEST_API_LOCK();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return call<VGPU_OP_VMM_MAP>({ptr, size, offset, handle});
}

KVMGPU_DRIVER_ENTRY(cuMemUnmap, 10020);
extern "C" CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    GUEST_API_LOCK();
    CUresult r = call<VGPU_OP_VMM_UNMAP>({ptr, size});
    if (r == CUDA_SUCCESS)
        allocations_remove_within(ptr, size);
    return r;
}

// One descriptor per device: the vGPU gives a VM's mappings to the current
// context's device only.
KVMGPU_DRIVER_ENTRY(cuMemSetAccess, 10020);
extern "C" CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count)
{
    GUEST_API_LOCK();
    if (desc == nullptr || count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
            return CUDA_ERROR_INVALID_VALUE;
        if (CUresult r = call<VGPU_OP_VMM_SET_ACCESS>({ptr, size, device_arg(desc[i].location.id), desc[i].flags}))
            return r;
        allocations_remove_within(ptr, size);
        if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE)
            allocation_add(ptr, size);
    }
    return CUDA_SUCCESS;
}

// Shareable handles name memory to another process (a file descriptor, a
// fabric handle): a VM's memory cannot be shared so. The arguments are
// checked as the driver checks them, then the call is refused.
KVMGPU_DRIVER_ENTRY(cuMemExportToShareableHandle, 10020);
extern "C" CUresult cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                                 CUmemAllocationHandleType, unsigned long long flags)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (shareableHandle == nullptr || handle == 0 || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_ERROR_NOT_SUPPORTED;
}

KVMGPU_DRIVER_ENTRY(cuMemImportFromShareableHandle, 10020);
extern "C" CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                                   CUmemAllocationHandleType)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (handle == nullptr || osHandle == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_ERROR_NOT_SUPPORTED;
}
