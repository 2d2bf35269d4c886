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

// Pinned device memory of the current context's device, no export handle:
// what the vGPU offers.
CUresult prop_ok(const CUmemAllocationProp* prop)
{
    if (prop == nullptr || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE || prop->win32HandleMetaData != nullptr ||
        prop->allocFlags.compressionType != 0)
        return CUDA_ERROR_NOT_SUPPORTED; // IPC handles, compression: not offered
    CUdevice dev;
    if (CUresult r = cuCtxGetDevice(&dev))
        return r;
    return prop->location.id == dev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
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
    if (CUresult r = prop_ok(prop))
        return r;
    uint64_t g = 0;
    CUresult r = call<VGPU_OP_VMM_GRANULARITY>(&g);
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
    uint64_t h = 0;
    CUresult r = call<VGPU_OP_VMM_CREATE>({size}, &h);
    if (r == CUDA_SUCCESS)
        *handle = h;
    return r;
}

KVMGPU_DRIVER_ENTRY(cuMemRelease, 10020);
extern "C" CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    GUEST_API_LOCK();
    return call<VGPU_OP_VMM_RELEASE>({handle});
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
