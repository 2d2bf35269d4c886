// Pitched (2-D) memory: cudaMallocPitch, 2-D copies (one cuMemcpy2D, one
// command on the ring) and memsets (one operation per row where the rows
// are not contiguous).
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {

// Row alignment of a pitched allocation: the texture pitch alignment of
// current GPUs, so rows start where the hardware's 2-D accesses want them.
constexpr size_t kPitchAlign = 512;

cudaError_t copy_rows(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                      cudaMemcpyKind kind, cudaStream_t stream, bool async)
{
    if (width > dpitch || width > spitch)
        return record(cudaErrorInvalidPitchValue);
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (width == dpitch && width == spitch) { // contiguous: one copy
        size_t bytes;
        if (__builtin_mul_overflow(width, height, &bytes))
            return record(cudaErrorInvalidValue);
        return async ? cudaMemcpyAsync(dst, src, bytes, kind, stream) : cudaMemcpy(dst, src, bytes, kind);
    }
    // Rows apart: one 2-D copy (the vGPU checks both spans).
    CUDA_MEMCPY2D c{};
    CUmemorytype src_type, dst_type;
    if (!memory_type_of(kind, true, &src_type) || !memory_type_of(kind, false, &dst_type))
        return record(cudaErrorInvalidMemcpyDirection);
    set_source(&c, src_type, src);
    set_destination(&c, dst_type, dst);
    c.srcPitch = spitch;
    c.dstPitch = dpitch;
    c.WidthInBytes = width;
    c.Height = height;
    return record(async ? cuMemcpy2DAsync(&c, stream) : cuMemcpy2D(&c));
}

cudaError_t set_rows(void* p, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream, bool async)
{
    if (width > pitch)
        return record(cudaErrorInvalidPitchValue);
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (width == pitch) {
        size_t bytes;
        if (__builtin_mul_overflow(pitch, height, &bytes))
            return record(cudaErrorInvalidValue);
        return async ? cudaMemsetAsync(p, value, bytes, stream) : cudaMemset(p, value, bytes);
    }
    for (size_t row = 0; row < height; ++row) {
        void* r = static_cast<char*>(p) + row * pitch;
        if (cudaError_t e = async ? cudaMemsetAsync(r, value, width, stream) : cudaMemset(r, value, width))
            return e;
    }
    return cudaSuccess;
}

} // namespace

extern "C" {

cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height)
{
    GUEST_API_LOCK();
    if (p == nullptr || pitch == nullptr)
        return record(cudaErrorInvalidValue);
    size_t row, bytes;
    if (__builtin_add_overflow(width, kPitchAlign - 1, &row))
        return record(cudaErrorInvalidValue);
    row &= ~(kPitchAlign - 1);
    if (__builtin_mul_overflow(row, height, &bytes))
        return record(cudaErrorMemoryAllocation);
    if (cudaError_t e = cudaMalloc(p, bytes))
        return e;
    *pitch = row;
    return cudaSuccess;
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return copy_rows(dst, dpitch, src, spitch, width, height, kind, nullptr, false);
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return copy_rows(dst, dpitch, src, spitch, width, height, kind, stream, true);
}

cudaError_t cudaMemset2D(void* p, size_t pitch, int value, size_t width, size_t height)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return set_rows(p, pitch, value, width, height, nullptr, false);
}

cudaError_t cudaMemset2DAsync(void* p, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return set_rows(p, pitch, value, width, height, stream, true);
}

} // extern "C"
