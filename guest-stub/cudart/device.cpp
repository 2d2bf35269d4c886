// Device management and queries: device count and selection, properties
// and attributes, synchronize and reset, versions, flags and preferences.
#include <string.h>

#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {

unsigned g_device_flags = 0;

int attribute(CUdevice_attribute a, int dev)
{
    int v = 0;
    if (cuDeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS)
        return 0; // the host backend answers only some; the rest read 0
    return v;
}

cudaError_t device_count(int* count)
{
    if (cudaError_t e = sticky_error())
        return e;
    if (CUresult r = cuInit(0))
        return record(r);
    if (CUresult r = cuDeviceGetCount(count))
        return record(r);
    return cudaSuccess;
}

} // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count)
{
    GUEST_API_LOCK();
    if (count == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = device_count(count))
        return e;
    return *count == 0 ? record(cudaErrorNoDevice) : cudaSuccess;
}

// As the runtime since CUDA 12: the device's primary context is made
// current at once.
cudaError_t cudaSetDevice(int dev)
{
    GUEST_API_LOCK();
    int count = 0;
    if (cudaError_t e = device_count(&count))
        return e;
    if (dev < 0 || dev >= count || dev >= kMaxDevices)
        return record(cudaErrorInvalidDevice);
    set_current_device(dev);
    return enter();
}

cudaError_t cudaGetDevice(int* dev)
{
    GUEST_API_LOCK();
    if (dev == nullptr)
        return record(cudaErrorInvalidValue);
    *dev = current_device();
    return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned flags)
{
    GUEST_API_LOCK();
    // cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax
    if ((flags & ~0x1fu) != 0)
        return record(cudaErrorInvalidValue);
    g_device_flags = flags;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned* flags)
{
    GUEST_API_LOCK();
    if (flags == nullptr)
        return record(cudaErrorInvalidValue);
    *flags = g_device_flags | cudaDeviceMapHost; // host memory is always mapped
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int dev)
{
    GUEST_API_LOCK();
    if (value == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = sticky_error())
        return e;
    if (CUresult r = cuInit(0))
        return record(r);
    // cudaDeviceAttr numbers are CUdevice_attribute numbers.
    return record(cuDeviceGetAttribute(value, static_cast<CUdevice_attribute>(attr), dev));
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int dev)
{
    GUEST_API_LOCK();
    if (p == nullptr)
        return record(cudaErrorInvalidValue);
    int count = 0;
    if (cudaError_t e = device_count(&count))
        return e;
    if (dev < 0 || dev >= count)
        return record(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    if (CUresult r = cuDeviceGetName(p->name, sizeof p->name, dev))
        return record(r);
    if (CUresult r = cuDeviceTotalMem(&p->totalGlobalMem, dev))
        return record(r);
    p->sharedMemPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, dev);
    p->regsPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, dev);
    p->warpSize = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
    p->memPitch = attribute(CU_DEVICE_ATTRIBUTE_MAX_PITCH, dev);
    p->maxThreadsPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
    p->maxThreadsDim[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, dev);
    p->maxThreadsDim[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, dev);
    p->maxThreadsDim[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, dev);
    p->maxGridSize[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, dev);
    p->maxGridSize[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, dev);
    p->maxGridSize[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, dev);
    p->totalConstMem = attribute(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, dev);
    p->major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    p->minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    p->textureAlignment = attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, dev);
    p->multiProcessorCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    p->integrated = attribute(CU_DEVICE_ATTRIBUTE_INTEGRATED, dev);
    p->canMapHostMemory = attribute(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, dev);
    p->concurrentKernels = attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, dev);
    p->ECCEnabled = attribute(CU_DEVICE_ATTRIBUTE_ECC_ENABLED, dev);
    p->pciBusID = attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
    p->pciDeviceID = attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev);
    p->asyncEngineCount = attribute(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, dev);
    p->unifiedAddressing = attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, dev);
    p->memoryBusWidth = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev);
    p->l2CacheSize = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
    p->maxThreadsPerMultiProcessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev);
    p->sharedMemPerMultiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, dev);
    p->regsPerMultiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, dev);
    p->cooperativeLaunch = attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev);
    p->sharedMemPerBlockOptin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    p->maxBlocksPerMultiProcessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, dev);
    // The device's own figures: a persisting-L2 limit and access policy
    // windows are accepted as the hints CUDA documents them to be (the VMM
    // keeps them and sets no L2 aside on a GPU other VMs share).
    p->persistingL2CacheMaxSize = attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, dev);
    p->accessPolicyMaxWindowSize = attribute(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, dev);
    p->hostRegisterSupported = 1; // cudaHostRegister works on any mapped guest buffer
    // Managed memory as the guest Driver API emulates it (docs/managed-memory.md).
    p->managedMemory = attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev);
    p->concurrentManagedAccess = attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev);
    p->pageableMemoryAccess = attribute(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, dev);
    p->pageableMemoryAccessUsesHostPageTables =
        attribute(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, dev);
    p->directManagedMemAccessFromHost = attribute(CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST, dev);
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuCtxSynchronize());
}

// Destroys the current device's primary context (modules, memory, streams
// and events with it) and clears the runtime's errors; the next call makes
// a fresh one.
cudaError_t cudaDeviceReset(void)
{
    GUEST_API_LOCK();
    const int dev = current_device();
    if (CUresult r = cuInit(0))
        return record(r);
    CUresult r = cuDevicePrimaryCtxReset(dev);
    forget_device_modules(dev);
    forget_primary_context(dev);
    if (r != CUDA_SUCCESS)
        return record(r);
    clear_errors();
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemGetInfo(free, total));
}

// The vGPU does not tell the guest its driver's version: both report the
// version of the CUDA headers this runtime was built with.
cudaError_t cudaRuntimeGetVersion(int* v)
{
    GUEST_API_LOCK();
    if (v == nullptr)
        return record(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* v)
{
    GUEST_API_LOCK();
    return cudaRuntimeGetVersion(v);
}

// Cache preferences are hints in CUDA too; the VMM's driver picks.
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache)
{
    GUEST_API_LOCK();
    return sticky_error();
}
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* c)
{
    GUEST_API_LOCK();
    if (c == nullptr)
        return record(cudaErrorInvalidValue);
    *c = cudaFuncCachePreferNone;
    return sticky_error();
}
cudaError_t cudaFuncSetCacheConfig(const void*, cudaFuncCache)
{
    GUEST_API_LOCK();
    return sticky_error();
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value)
{
    GUEST_API_LOCK();
    CUfunction f;
    if (cudaError_t e = enter_with_function(func, &f))
        return e;
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize)
        return record(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value));
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
        return record(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, value));
    return record(cudaErrorNotSupported);
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, const void* func)
{
    GUEST_API_LOCK();
    if (a == nullptr)
        return record(cudaErrorInvalidValue);
    CUfunction f;
    if (cudaError_t e = enter_with_function(func, &f))
        return e;
    memset(a, 0, sizeof *a);
    int v[9] = {};
    for (int i = 0; i <= 8; ++i)
        if (CUresult r = cuFuncGetAttribute(&v[i], static_cast<CUfunction_attribute>(i), f))
            return record(r);
    a->maxThreadsPerBlock = v[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
    a->sharedSizeBytes = v[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES];
    a->constSizeBytes = v[CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES];
    a->localSizeBytes = v[CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES];
    a->numRegs = v[CU_FUNC_ATTRIBUTE_NUM_REGS];
    a->ptxVersion = v[CU_FUNC_ATTRIBUTE_PTX_VERSION];
    a->binaryVersion = v[CU_FUNC_ATTRIBUTE_BINARY_VERSION];
    a->cacheModeCA = v[CU_FUNC_ATTRIBUTE_CACHE_MODE_CA];
    a->maxDynamicSharedSizeBytes = v[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES];
    return cudaSuccess;
}

} // extern "C"
