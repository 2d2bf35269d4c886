// Occupancy, device limits, P2P attributes and stream priorities: the
// runtime's names for the guest Driver API's calls (guest_cuda.h), whose
// numbers (cudaLimit, cudaDeviceP2PAttr, occupancy flags) are the driver's.
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

extern "C" {

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags)
{
    GUEST_API_LOCK();
    if (numBlocks == nullptr || (flags & ~(unsigned)cudaOccupancyDisableCachingOverride) != 0)
        return record(cudaErrorInvalidValue);
    CUfunction f;
    if (cudaError_t e = enter_with_function(func, &f))
        return e;
    return record(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, f, blockSize, dynamicSMemSize, flags));
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                          size_t dynamicSMemSize)
{
    GUEST_API_LOCK();
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                                  cudaOccupancyDefault);
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, const void* func, int numBlocks,
                                                      int blockSize)
{
    GUEST_API_LOCK();
    CUfunction f;
    if (cudaError_t e = enter_with_function(func, &f))
        return e;
    return record(cuOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize, f, numBlocks, blockSize));
}

cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuCtxSetLimit(static_cast<CUlimit>(limit), value));
}

cudaError_t cudaDeviceGetLimit(size_t* value, enum cudaLimit limit)
{
    GUEST_API_LOCK();
    if (value == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    return record(cuCtxGetLimit(value, static_cast<CUlimit>(limit)));
}

// Persisting L2 lines are never set aside (the limit is a hint the VMM
// keeps, vgpu_abi.h): there is nothing to reset, as on a GPU with none.
cudaError_t cudaCtxResetPersistingL2Cache(void)
{
    GUEST_API_LOCK();
    return enter();
}

cudaError_t cudaDeviceGetP2PAttribute(int* value, enum cudaDeviceP2PAttr attr, int srcDevice, int dstDevice)
{
    GUEST_API_LOCK();
    if (value == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    return record(cuDeviceGetP2PAttribute(value, static_cast<CUdevice_P2PAttribute>(attr), srcDevice, dstDevice));
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuCtxGetStreamPriorityRange(leastPriority, greatestPriority));
}

cudaError_t cudaStreamGetPriority(cudaStream_t s, int* priority)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuStreamGetPriority(s, priority));
}

} // extern "C"
