// Arrays and 2-D/3-D copies: cuda.h's descriptors turned into the vGPU's
// (vgpu_array_abi.h). A host side goes as the guest-physical address of its
// first byte (it must be physically contiguous); the VMM checks every side.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/platform.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

CUresult create(CUarray* out, const vgpu_array_desc& d)
{
    if (out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_ARRAY_CREATE>();
    c.payload = &d;
    c.payload_len = sizeof d;
    return call_result(c, out);
}

// The array's descriptor; INVALID_VALUE when the caller gave nowhere to put it (`out`).
CUresult describe(CUarray a, const void* out, vgpu_array_desc* d)
{
    if (out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_ARRAY_GET_DESCRIPTOR>({handle_bits(a)});
    return call_sync(c, nullptr, d, sizeof *d);
}

// One side of a copy in cuda.h's terms.
struct Side {
    CUmemorytype type;
    const void* host;
    CUdeviceptr device;
    CUarray array;
    size_t x, y, z, pitch, height;
};

// The vGPU's side; *pageable set when it is host memory that is not page-locked.
CUresult side_of(const Side& in, uint64_t width, uint64_t height, uint64_t depth, vgpu_copy_side* out, bool* pageable)
{
    *out = vgpu_copy_side{};
    CUmemorytype type = in.type;
    const void* host = in.host;
    if (type == CU_MEMORYTYPE_UNIFIED) { // the address is in the device field
        type = allocation_contains(in.device, 0) ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        host = reinterpret_cast<const void*>(static_cast<uintptr_t>(in.device));
    }
    out->x_bytes = in.x;
    out->y = in.y;
    out->z = in.z;
    out->pitch = in.pitch;
    out->height = in.height;
    switch (type) {
    case CU_MEMORYTYPE_ARRAY:
        if (in.array == nullptr)
            return CUDA_ERROR_INVALID_VALUE;
        out->kind = VGPU_COPY_ARRAY;
        out->base = handle_bits(in.array);
        out->pitch = out->height = 0;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE:
        out->kind = VGPU_COPY_DEVICE;
        out->base = in.device;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_HOST: {
        uint64_t first, bytes, gpa;
        if (host == nullptr || !vgpu_copy_span(out, width, height, depth, &first, &bytes))
            return CUDA_ERROR_INVALID_VALUE;
        const uint8_t* p = static_cast<const uint8_t*>(host) + first;
        if (!guest::platform::phys_contiguous(p, bytes, &gpa))
            return CUDA_ERROR_INVALID_VALUE;
        *pageable = *pageable || !page_locked(p, bytes);
        out->kind = VGPU_COPY_HOST;
        out->base = gpa; // the first byte: the offsets are folded in
        out->x_bytes = out->y = out->z = 0;
        return CUDA_SUCCESS;
    }
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult copy(const Side& src, const Side& dst, size_t width, size_t height, size_t depth, CUstream stream, bool async)
{
    if (CUresult r = ready())
        return r;
    if (width == 0 || height == 0 || depth == 0)
        return CUDA_SUCCESS;
    vgpu_copy3d d;
    bool pageable = false;
    if (CUresult r = side_of(src, width, height, depth, &d.src, &pageable))
        return r;
    if (CUresult r = side_of(dst, width, height, depth, &d.dst, &pageable))
        return r;
    d.width_bytes = width;
    d.height = height;
    d.depth = depth;
    Call c = command<VGPU_OP_MEMCPY_3D>({stream_arg(stream)});
    c.payload = &d;
    c.payload_len = sizeof d;
    if (async && pageable) // CUDA's rules for pageable memory, as cuMemcpyAsync
        async = false;
    return async ? call_async(c) : sync_point(call_sync(c));
}

CUresult copy_2d(const CUDA_MEMCPY2D* p, CUstream stream, bool async)
{
    if (p == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const Side src{p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, 0, p->srcPitch, 0};
    const Side dst{p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, 0, p->dstPitch, 0};
    return copy(src, dst, p->WidthInBytes, p->Height, 1, stream, async);
}

CUresult copy_3d(const CUDA_MEMCPY3D* p, CUstream stream, bool async)
{
    if (p == nullptr || p->reserved0 != nullptr || p->reserved1 != nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->srcLOD != 0 || p->dstLOD != 0)
        return CUDA_ERROR_NOT_SUPPORTED; // mipmap levels: not offered
    const Side src{p->srcMemoryType, p->srcHost,  p->srcDevice, p->srcArray, p->srcXInBytes,
                   p->srcY,          p->srcZ,     p->srcPitch,  p->srcHeight};
    const Side dst{p->dstMemoryType, p->dstHost,  p->dstDevice, p->dstArray, p->dstXInBytes,
                   p->dstY,          p->dstZ,     p->dstPitch,  p->dstHeight};
    return copy(src, dst, p->WidthInBytes, p->Height, p->Depth, stream, async);
}

} // namespace

extern "C" CUresult cuArrayCreate(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* d)
{
    GUEST_API_LOCK();
    if (d == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    return create(pHandle, vgpu_array_desc{d->Width, d->Height, 0, static_cast<uint32_t>(d->Format), d->NumChannels, 0, 0});
}

extern "C" CUresult cuArray3DCreate(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* d)
{
    GUEST_API_LOCK();
    if (d == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    return create(pHandle, vgpu_array_desc{d->Width, d->Height, d->Depth, static_cast<uint32_t>(d->Format),
                                           d->NumChannels, d->Flags, 0});
}

KVMGPU_DRIVER_ENTRY(cuArrayDestroy, 2000);
extern "C" CUresult cuArrayDestroy(CUarray hArray)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_ARRAY_DESTROY>({handle_bits(hArray)});
    return call_sync(c);
}

extern "C" CUresult cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR* out, CUarray hArray)
{
    GUEST_API_LOCK();
    vgpu_array_desc d;
    if (CUresult r = describe(hArray, out, &d))
        return r;
    *out = CUDA_ARRAY_DESCRIPTOR{d.width, d.height, static_cast<CUarray_format>(d.format), d.channels};
    return CUDA_SUCCESS;
}

extern "C" CUresult cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR* out, CUarray hArray)
{
    GUEST_API_LOCK();
    vgpu_array_desc d;
    if (CUresult r = describe(hArray, out, &d))
        return r;
    *out = CUDA_ARRAY3D_DESCRIPTOR{d.width, d.height, d.depth, static_cast<CUarray_format>(d.format), d.channels, d.flags};
    return CUDA_SUCCESS;
}

extern "C" CUresult cuMemcpy2D(const CUDA_MEMCPY2D* p)
{
    GUEST_API_LOCK();
    return copy_2d(p, 0, false);
}
// The vGPU has no alignment rule of its own for 2-D copies: the same copy.
extern "C" CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D* p)
{
    GUEST_API_LOCK();
    return copy_2d(p, 0, false);
}
extern "C" CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D* p, CUstream s)
{
    GUEST_API_LOCK();
    return copy_2d(p, s, true);
}
extern "C" CUresult cuMemcpy3D(const CUDA_MEMCPY3D* p)
{
    GUEST_API_LOCK();
    return copy_3d(p, 0, false);
}
extern "C" CUresult cuMemcpy3DAsync(const CUDA_MEMCPY3D* p, CUstream s)
{
    GUEST_API_LOCK();
    return copy_3d(p, s, true);
}

namespace {
// The linear copies to, from and between arrays: `bytes` from byte `offset`
// of an array's first row.
Side host_side(const void* host, size_t bytes) { return Side{CU_MEMORYTYPE_HOST, host, 0, nullptr, 0, 0, 0, bytes, 0}; }
Side device_side(CUdeviceptr d, size_t bytes) { return Side{CU_MEMORYTYPE_DEVICE, nullptr, d, nullptr, 0, 0, 0, bytes, 0}; }
Side array_side(CUarray a, size_t offset) { return Side{CU_MEMORYTYPE_ARRAY, nullptr, 0, a, offset, 0, 0, 0, 0}; }

CUresult linear(CUarray array, size_t offset, const void* host, size_t bytes, bool to_array)
{
    return to_array ? copy(host_side(host, bytes), array_side(array, offset), bytes, 1, 1, 0, false)
                    : copy(array_side(array, offset), host_side(host, bytes), bytes, 1, 1, 0, false);
}
} // namespace

extern "C" CUresult cuMemcpyDtoA(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount)
{
    GUEST_API_LOCK();
    return copy(device_side(srcDevice, ByteCount), array_side(dstArray, dstOffset), ByteCount, 1, 1, 0, false);
}

extern "C" CUresult cuMemcpyAtoD(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
    GUEST_API_LOCK();
    return copy(array_side(srcArray, srcOffset), device_side(dstDevice, ByteCount), ByteCount, 1, 1, 0, false);
}

extern "C" CUresult cuMemcpyAtoA(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
    GUEST_API_LOCK();
    return copy(array_side(srcArray, srcOffset), array_side(dstArray, dstOffset), ByteCount, 1, 1, 0, false);
}

extern "C" CUresult cuMemcpyHtoAAsync(CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount,
                                      CUstream hStream)
{
    GUEST_API_LOCK();
    return copy(host_side(srcHost, ByteCount), array_side(dstArray, dstOffset), ByteCount, 1, 1, hStream, true);
}

extern "C" CUresult cuMemcpyAtoHAsync(void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
                                      CUstream hStream)
{
    GUEST_API_LOCK();
    return copy(array_side(srcArray, srcOffset), host_side(dstHost, ByteCount), ByteCount, 1, 1, hStream, true);
}

extern "C" CUresult cuMemcpyHtoA(CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount)
{
    GUEST_API_LOCK();
    return linear(dstArray, dstOffset, srcHost, ByteCount, true);
}

extern "C" CUresult cuMemcpyAtoH(void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
    GUEST_API_LOCK();
    return linear(srcArray, srcOffset, dstHost, ByteCount, false);
}
