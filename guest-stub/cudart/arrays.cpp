// CUDA arrays in the runtime: channel descriptors, cudaMallocArray and
// cudaMalloc3DArray, and the copies to, from and between arrays (2-D, the
// deprecated linear cudaMemcpyToArray/FromArray, cudaMemcpy3D), over the
// guest Driver API's cuArray3DCreate and cuMemcpy2D/3D (cuda_array.cpp).
#include "guest-stub/cudart/array_formats.h"
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {

CUarray cu(cudaArray_const_t a) { return reinterpret_cast<CUarray>(const_cast<cudaArray_t>(a)); }

cudaError_t run_2d(const CUDA_MEMCPY2D& c, cudaStream_t stream, bool async)
{
    return record(async ? cuMemcpy2DAsync(&c, stream) : cuMemcpy2D(&c));
}

// A 2-D copy between pitched memory at `ptr` and an array at (x_bytes, y):
// into the array when `into`, else out of it.
struct ArrayCopy {
    cudaArray_const_t array;
    size_t x_bytes, y;
    const void* ptr;
    size_t pitch, width, height;
};

cudaError_t array_copy(const ArrayCopy& a, bool into, cudaMemcpyKind kind, cudaStream_t stream, bool async)
{
    CUDA_MEMCPY2D c{};
    CUmemorytype type;
    if (!memory_type_of(kind, into, &type))
        return record(cudaErrorInvalidMemcpyDirection);
    size_t *x = &c.srcXInBytes, *y = &c.srcY;
    if (into) {
        set_source(&c, type, a.ptr);
        c.srcPitch = a.pitch;
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        c.dstArray = cu(a.array);
        x = &c.dstXInBytes, y = &c.dstY;
    } else {
        set_destination(&c, type, const_cast<void*>(a.ptr));
        c.dstPitch = a.pitch;
        c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        c.srcArray = cu(a.array);
    }
    *x = a.x_bytes;
    *y = a.y;
    c.WidthInBytes = a.width;
    c.Height = a.height;
    return run_2d(c, stream, async);
}

// The bytes of one row of array a.
cudaError_t row_bytes(cudaArray_const_t a, size_t* out)
{
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (CUresult r = cuArray3DGetDescriptor(&d, cu(a)))
        return record(r);
    *out = d.Width * element_bytes(d.Format, d.NumChannels);
    return cudaSuccess;
}

// cudaMemcpyToArray/FromArray: `count` bytes from row y, byte x on, running
// on through the rows: a partial first row, whole rows, a partial last one.
template <class Piece>
cudaError_t linear_span(cudaArray_const_t a, size_t x, size_t y, size_t count, Piece piece)
{
    size_t row;
    if (cudaError_t e = row_bytes(a, &row))
        return e;
    if (x >= row && count != 0)
        return record(cudaErrorInvalidValue);
    size_t done = 0;
    if (x != 0 && count != 0) {
        const size_t first = count < row - x ? count : row - x;
        if (cudaError_t e = piece(done, x, y, first, 1))
            return e;
        done += first;
        ++y;
    }
    if (const size_t rows = (count - done) / row) {
        if (cudaError_t e = piece(done, 0, y, row, rows))
            return e;
        done += rows * row;
        y += rows;
    }
    if (done < count)
        return piece(done, 0, y, count - done, 1);
    return cudaSuccess;
}

} // namespace

namespace guest::cudart {

bool memory_type_of(cudaMemcpyKind kind, bool source, CUmemorytype* out)
{
    switch (kind) {
    case cudaMemcpyHostToHost: *out = CU_MEMORYTYPE_HOST; return true;
    case cudaMemcpyHostToDevice: *out = source ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE; return true;
    case cudaMemcpyDeviceToHost: *out = source ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST; return true;
    case cudaMemcpyDeviceToDevice: *out = CU_MEMORYTYPE_DEVICE; return true;
    case cudaMemcpyDefault: *out = CU_MEMORYTYPE_UNIFIED; return true;
    }
    return false;
}

void set_source(CUDA_MEMCPY2D* c, CUmemorytype type, const void* p)
{
    c->srcMemoryType = type;
    if (type == CU_MEMORYTYPE_HOST)
        c->srcHost = p;
    else
        c->srcDevice = reinterpret_cast<CUdeviceptr>(p);
}

void set_destination(CUDA_MEMCPY2D* c, CUmemorytype type, void* p)
{
    c->dstMemoryType = type;
    if (type == CU_MEMORYTYPE_HOST)
        c->dstHost = p;
    else
        c->dstDevice = reinterpret_cast<CUdeviceptr>(p);
}

} // namespace guest::cudart

extern "C" {

struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f)
{
    return cudaChannelFormatDesc{x, y, z, w, f};
}

cudaError_t cudaMallocArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc, size_t width, size_t height,
                            unsigned int flags)
{
    GUEST_API_LOCK();
    return cudaMalloc3DArray(array, desc, cudaExtent{width, height, 0}, flags);
}

cudaError_t cudaMalloc3DArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc, struct cudaExtent extent,
                              unsigned int flags)
{
    GUEST_API_LOCK();
    if (array == nullptr || desc == nullptr)
        return record(cudaErrorInvalidValue);
    CUDA_ARRAY3D_DESCRIPTOR d{};
    if (!format_of(*desc, &d.Format, &d.NumChannels))
        return record(cudaErrorInvalidChannelDescriptor);
    if (cudaError_t e = enter())
        return e;
    d.Width = extent.width;
    d.Height = extent.height;
    d.Depth = extent.depth;
    d.Flags = flags; // cudaArray* flags are the CUDA_ARRAY3D_* numbers
    CUarray a = nullptr;
    if (CUresult r = cuArray3DCreate(&a, &d))
        return record(r);
    *array = reinterpret_cast<cudaArray_t>(a);
    return cudaSuccess;
}

cudaError_t cudaFreeArray(cudaArray_t array)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (array == nullptr)
        return cudaSuccess;
    return record(cuArrayDestroy(cu(array)));
}

cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc* desc, struct cudaExtent* extent, unsigned int* flags,
                             cudaArray_t array)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (CUresult r = cuArray3DGetDescriptor(&d, cu(array)))
        return record(r);
    if (desc != nullptr)
        *desc = channel_desc_of(d.Format, d.NumChannels);
    if (extent != nullptr)
        *extent = cudaExtent{d.Width, d.Height, d.Depth};
    if (flags != nullptr)
        *flags = d.Flags;
    return cudaSuccess;
}

cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc* desc, cudaArray_const_t array)
{
    GUEST_API_LOCK();
    if (desc == nullptr)
        return record(cudaErrorInvalidValue);
    return cudaArrayGetInfo(desc, nullptr, nullptr, const_cast<cudaArray_t>(array));
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return array_copy({dst, wOffset, hOffset, src, spitch, width, height}, true, kind, nullptr, false);
}

cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                     size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return array_copy({dst, wOffset, hOffset, src, spitch, width, height}, true, kind, stream, true);
}

cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                  size_t width, size_t height, enum cudaMemcpyKind kind)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return array_copy({src, wOffset, hOffset, dst, dpitch, width, height}, false, kind, nullptr, false);
}

cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                       size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind,
                                       cudaStream_t stream)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return array_copy({src, wOffset, hOffset, dst, dpitch, width, height}, false, kind, stream, true);
}

cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,
                                     size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height,
                                     enum cudaMemcpyKind kind)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return record(cudaErrorInvalidMemcpyDirection);
    CUDA_MEMCPY2D c{};
    c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.srcArray = cu(src);
    c.dstArray = cu(dst);
    c.srcXInBytes = wOffsetSrc;
    c.srcY = hOffsetSrc;
    c.dstXInBytes = wOffsetDst;
    c.dstY = hOffsetDst;
    c.WidthInBytes = width;
    c.Height = height;
    return run_2d(c, nullptr, false);
}

cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                              enum cudaMemcpyKind kind)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return linear_span(dst, wOffset, hOffset, count, [&](size_t at, size_t x, size_t y, size_t width, size_t rows) {
        return array_copy({dst, x, y, static_cast<const char*>(src) + at, width, width, rows}, true, kind, nullptr,
                          false);
    });
}

cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                enum cudaMemcpyKind kind)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return linear_span(src, wOffset, hOffset, count, [&](size_t at, size_t x, size_t y, size_t width, size_t rows) {
        return array_copy({src, x, y, static_cast<char*>(dst) + at, width, width, rows}, false, kind, nullptr,
                          false);
    });
}

} // extern "C"
