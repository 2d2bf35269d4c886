// Stream-ordered allocation: the runtime's names for the guest Driver API's
// (cuda_memory_pool.cpp says how it works). cudaMemPool_t is the driver's
// CUmemoryPool, and the attribute, location and access numbers are the
// driver's.
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

static_assert(sizeof(cudaMemAccessDesc) == sizeof(CUmemAccessDesc) && cudaMemLocationTypeDevice == 1 &&
                  cudaMemAccessFlagsProtReadWrite == 3 && cudaMemPoolAttrUsedMemHigh == 8,
              "the runtime's pool types are the driver's");

extern "C" {

cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t s)
{
    GUEST_API_LOCK();
    if (p == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    CUdeviceptr d = 0;
    const CUresult r = cuMemAllocAsync(&d, bytes, s);
    *p = r == CUDA_SUCCESS ? reinterpret_cast<void*>(static_cast<uintptr_t>(d)) : nullptr;
    return record(r);
}

cudaError_t cudaMallocFromPoolAsync(void** p, size_t bytes, cudaMemPool_t pool, cudaStream_t s)
{
    GUEST_API_LOCK();
    if (p == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    CUdeviceptr d = 0;
    const CUresult r = cuMemAllocFromPoolAsync(&d, bytes, pool, s);
    *p = r == CUDA_SUCCESS ? reinterpret_cast<void*>(static_cast<uintptr_t>(d)) : nullptr;
    return record(r);
}

cudaError_t cudaFreeAsync(void* p, cudaStream_t s)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemFreeAsync(reinterpret_cast<uintptr_t>(p), s));
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int dev)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuDeviceGetDefaultMemPool(pool, dev));
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int dev)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuDeviceGetMemPool(pool, dev));
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void* value)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemPoolSetAttribute(pool, static_cast<CUmemPool_attribute>(attr), value));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void* value)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemPoolGetAttribute(pool, static_cast<CUmemPool_attribute>(attr), value));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemPoolTrimTo(pool, keep));
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc* descs, size_t count)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    const CUresult r = cuMemPoolSetAccess(pool, reinterpret_cast<const CUmemAccessDesc*>(descs), count);
    // The access changes went through the devices' primary contexts: the
    // current device's is current again.
    if (cudaError_t e = enter())
        return e;
    return record(r);
}

cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags* flags, cudaMemPool_t pool, struct cudaMemLocation* location)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemPoolGetAccess(reinterpret_cast<CUmemAccess_flags*>(flags), pool,
                                     reinterpret_cast<CUmemLocation*>(location)));
}

} // extern "C"
