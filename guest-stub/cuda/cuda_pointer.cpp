// cuPointerGetAttribute(s): what the guest library knows of an address,
// answered in the guest. Managed memory (one address for the CPU and the
// device), the guest's device allocations and VMM mappings with access set
// (device memory), and page-locked guest memory (host memory); any other
// address: CUDA_ERROR_INVALID_VALUE, as the driver says for memory it does
// not know (cuPointerGetAttributes writes 0s and succeeds, as the driver).
#include <string.h>

#include "guest-stub/platform/api_lock.h"
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"

using namespace guest::cuda;

namespace {

enum class Kind { kUnknown, kManaged, kDevice, kHost };

struct Pointer {
    Kind kind = Kind::kUnknown;
    uint64_t start = 0, bytes = 0;
    uint64_t buffer_id = 0; // 0: page-locked host memory, whose blocks have none here
};

Pointer classify(CUdeviceptr p)
{
    Pointer out;
    if (managed_find(p, &out.start, &out.bytes, &out.buffer_id))
        out.kind = Kind::kManaged;
    else if (allocation_containing(p, &out.start, &out.bytes, &out.buffer_id))
        out.kind = Kind::kDevice;
    else if (page_locked(reinterpret_cast<const void*>(static_cast<uintptr_t>(p)), 1))
        out.kind = Kind::kHost;
    return out;
}

// One attribute of a known pointer into `data`.
CUresult answer(const Pointer& ptr, CUpointer_attribute attribute, CUdeviceptr p, void* data)
{
    CUdevice dev = 0;
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *static_cast<CUcontext*>(data) = current_context();
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *static_cast<unsigned*>(data) = ptr.kind == Kind::kHost ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        if (ptr.kind == Kind::kHost) // page-locked memory's zero-copy address (a unified block's own)
            return cuMemHostGetDevicePointer(static_cast<CUdeviceptr*>(data),
                                             reinterpret_cast<void*>(static_cast<uintptr_t>(p)), 0);
        *static_cast<CUdeviceptr*>(data) = p;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (ptr.kind == Kind::kDevice)
            return CUDA_ERROR_INVALID_VALUE;
        *static_cast<void**>(data) = reinterpret_cast<void*>(static_cast<uintptr_t>(p));
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: // cuFFT asks it of its work area
        if (ptr.buffer_id == 0)
            return CUDA_ERROR_NOT_SUPPORTED;
        *static_cast<unsigned long long*>(data) = ptr.buffer_id;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *static_cast<unsigned*>(data) = ptr.kind == Kind::kManaged;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        if (CUresult r = cuCtxGetDevice(&dev))
            return r;
        *static_cast<int*>(data) = dev;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        if (ptr.kind == Kind::kHost)
            return CUDA_ERROR_INVALID_VALUE; // the host allocator does not say where its blocks start
        if (attribute == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)
            *static_cast<CUdeviceptr*>(data) = ptr.start;
        else
            *static_cast<size_t*>(data) = ptr.bytes;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *static_cast<unsigned*>(data) = 1;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuPointerGetAttribute, 4000);
extern "C" CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr p)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (data == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const Pointer ptr = classify(p);
    if (ptr.kind == Kind::kUnknown)
        return CUDA_ERROR_INVALID_VALUE;
    return answer(ptr, attribute, p, data);
}

// Unknown memory: every attribute reads 0 and the call succeeds, as the
// driver answers it; an attribute that does not apply to known memory reads 0.
KVMGPU_DRIVER_ENTRY(cuPointerGetAttributes, 7000);
extern "C" CUresult cuPointerGetAttributes(unsigned int count, CUpointer_attribute* attributes, void** data,
                                           CUdeviceptr p)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (count == 0 || attributes == nullptr || data == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const Pointer ptr = classify(p);
    for (unsigned i = 0; i < count; ++i) {
        if (data[i] == nullptr)
            return CUDA_ERROR_INVALID_VALUE;
        uint64_t scratch[2] = {0, 0};
        CUresult r = ptr.kind == Kind::kUnknown ? CUDA_ERROR_INVALID_VALUE : answer(ptr, attributes[i], p, scratch);
        if (r == CUDA_ERROR_NOT_SUPPORTED)
            return CUDA_ERROR_INVALID_VALUE;
        // Each attribute's width, as cuda.h documents it.
        const size_t width = attributes[i] == CU_POINTER_ATTRIBUTE_MEMORY_TYPE ||
                                     attributes[i] == CU_POINTER_ATTRIBUTE_IS_MANAGED ||
                                     attributes[i] == CU_POINTER_ATTRIBUTE_MAPPED ||
                                     attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
                                 ? 4
                                 : 8;
        if (r != CUDA_SUCCESS)
            memset(scratch, 0, sizeof scratch);
        memcpy(data[i], scratch, width);
    }
    return CUDA_SUCCESS;
}
