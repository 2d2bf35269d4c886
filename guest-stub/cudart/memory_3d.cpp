// cudaMemcpy3D(Async): the runtime's parameters (positions and extent in
// the elements of the array taking part, else in bytes) turned into the
// Driver API's CUDA_MEMCPY3D (bytes), over the guest's cuMemcpy3D.
#include "guest-stub/cudart/array_formats.h"
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {

// One side: an array (its element size into *element) or a pitched pointer.
cudaError_t side(cudaArray_const_t array, const cudaPos& pos, const cudaPitchedPtr& ptr, CUmemorytype ptr_type,
                 size_t* element, size_t* x, size_t* y, size_t* z, CUmemorytype* type, CUarray* cu_array,
                 const void** host, CUdeviceptr* device, size_t* pitch, size_t* height)
{
    *y = pos.y;
    *z = pos.z;
    if (array != nullptr) {
        CUDA_ARRAY3D_DESCRIPTOR d;
        *cu_array = reinterpret_cast<CUarray>(const_cast<cudaArray_t>(array));
        if (CUresult r = cuArray3DGetDescriptor(&d, *cu_array))
            return record(r);
        *element = element_bytes(d.Format, d.NumChannels);
        *x = pos.x * *element;
        *type = CU_MEMORYTYPE_ARRAY;
        return cudaSuccess;
    }
    if (ptr.ptr == nullptr)
        return record(cudaErrorInvalidValue);
    *x = pos.x;
    *type = ptr_type;
    if (ptr_type == CU_MEMORYTYPE_HOST)
        *host = ptr.ptr;
    else
        *device = reinterpret_cast<CUdeviceptr>(ptr.ptr);
    *pitch = ptr.pitch;
    *height = ptr.ysize;
    return cudaSuccess;
}

cudaError_t copy_3d(const cudaMemcpy3DParms* p, cudaStream_t stream, bool async)
{
    if (p == nullptr || (p->srcArray != nullptr) == (p->srcPtr.ptr != nullptr) ||
        (p->dstArray != nullptr) == (p->dstPtr.ptr != nullptr))
        return record(cudaErrorInvalidValue); // each side one of an array and a pointer
    CUmemorytype src_type, dst_type;
    switch (p->kind) {
    case cudaMemcpyHostToHost: src_type = dst_type = CU_MEMORYTYPE_HOST; break;
    case cudaMemcpyHostToDevice: src_type = CU_MEMORYTYPE_HOST, dst_type = CU_MEMORYTYPE_DEVICE; break;
    case cudaMemcpyDeviceToHost: src_type = CU_MEMORYTYPE_DEVICE, dst_type = CU_MEMORYTYPE_HOST; break;
    case cudaMemcpyDeviceToDevice: src_type = dst_type = CU_MEMORYTYPE_DEVICE; break;
    case cudaMemcpyDefault: src_type = dst_type = CU_MEMORYTYPE_UNIFIED; break;
    default: return record(cudaErrorInvalidMemcpyDirection);
    }
    CUDA_MEMCPY3D c{};
    size_t element = 1; // bytes, unless an array takes part
    if (cudaError_t e = side(p->srcArray, p->srcPos, p->srcPtr, src_type, &element, &c.srcXInBytes, &c.srcY, &c.srcZ,
                             &c.srcMemoryType, &c.srcArray, &c.srcHost, &c.srcDevice, &c.srcPitch, &c.srcHeight))
        return e;
    const void* dst_host = nullptr;
    if (cudaError_t e = side(p->dstArray, p->dstPos, p->dstPtr, dst_type, &element, &c.dstXInBytes, &c.dstY, &c.dstZ,
                             &c.dstMemoryType, &c.dstArray, &dst_host, &c.dstDevice, &c.dstPitch, &c.dstHeight))
        return e;
    c.dstHost = const_cast<void*>(dst_host);
    c.WidthInBytes = p->extent.width * element;
    c.Height = p->extent.height;
    c.Depth = p->extent.depth;
    return record(async ? cuMemcpy3DAsync(&c, stream) : cuMemcpy3D(&c));
}

} // namespace

extern "C" {

cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms* p)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return copy_3d(p, nullptr, false);
}

cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms* p, cudaStream_t stream)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return copy_3d(p, stream, true);
}

} // extern "C"
