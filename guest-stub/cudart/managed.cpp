// Managed memory and pointer attributes: the guest Driver API's emulation
// (guest-stub/cuda/cuda_managed.cpp, docs/managed-memory.md) under the
// runtime's names. cudaFree of a managed pointer goes through cuMemFree.
#include "guest-stub/platform/api_lock.h"
#include "guest-stub/cudart/cudart_internal.h"

using namespace guest::cudart;

namespace {
CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }
CUmemLocation to_driver(const cudaMemLocation& l)
{
    CUmemLocation out;
    out.type = static_cast<CUmemLocationType>(l.type);
    out.id = l.id;
    return out;
}
} // namespace

extern "C" {

cudaError_t cudaMallocManaged(void** p, size_t bytes, unsigned flags)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (p == nullptr)
        return record(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    if (CUresult r = cuMemAllocManaged(&d, bytes, flags)) {
        *p = nullptr;
        return record(r);
    }
    *p = reinterpret_cast<void*>(d);
    return cudaSuccess;
}

cudaError_t cudaMemPrefetchAsync(const void* p, size_t count, cudaMemLocation location, unsigned flags,
                                 cudaStream_t stream)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemPrefetchAsync_v2(dptr(p), count, to_driver(location), flags, stream));
}

cudaError_t cudaMemAdvise(const void* p, size_t count, cudaMemoryAdvise advice, cudaMemLocation location)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemAdvise_v2(dptr(p), count, static_cast<CUmem_advise>(advice), to_driver(location)));
}

cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* p, size_t length, unsigned flags)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuStreamAttachMemAsync(stream, dptr(p), length, flags));
}

// Any pointer: memory the library does not know is cudaMemoryTypeUnregistered.
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attr, const void* p)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (attr == nullptr)
        return record(cudaErrorInvalidValue);
    *attr = cudaPointerAttributes{};
    attr->type = cudaMemoryTypeUnregistered;
    attr->device = 0;
    unsigned memory_type = 0, managed = 0;
    if (cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr(p)) != CUDA_SUCCESS)
        return cudaSuccess; // the runtime's answer for unregistered host memory
    cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, dptr(p));
    int device = 0;
    cuPointerGetAttribute(&device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dptr(p));
    attr->device = device;
    if (managed) {
        attr->type = cudaMemoryTypeManaged;
        attr->devicePointer = attr->hostPointer = const_cast<void*>(p);
    } else if (memory_type == CU_MEMORYTYPE_DEVICE) {
        attr->type = cudaMemoryTypeDevice;
        attr->devicePointer = const_cast<void*>(p);
    } else {
        attr->type = cudaMemoryTypeHost;
        attr->hostPointer = const_cast<void*>(p);
    }
    return cudaSuccess;
}

} // extern "C"
