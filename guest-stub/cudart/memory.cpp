// Memory: device allocations, page-locked host memory (allocated or
// registered), copies and memsets (synchronous and on streams), symbols.
// Host pointers may be anything mapped in the guest: page-locked memory
// goes to the vGPU as one range, pageable memory (malloc, the stack) as a
// scatter-gather list; the guest Driver API picks.
#include <string.h>

#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {

CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

cudaError_t copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream, bool async)
{
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return record(async ? cuMemcpyHtoDAsync(dptr(dst), src, bytes, stream)
                            : cuMemcpyHtoD(dptr(dst), src, bytes));
    case cudaMemcpyDeviceToHost:
        return record(async ? cuMemcpyDtoHAsync(dst, dptr(src), bytes, stream) : cuMemcpyDtoH(dst, dptr(src), bytes));
    case cudaMemcpyDeviceToDevice:
        return record(async ? cuMemcpyDtoDAsync(dptr(dst), dptr(src), bytes, stream)
                            : cuMemcpyDtoD(dptr(dst), dptr(src), bytes));
    case cudaMemcpyDefault: // unified addressing: the guest API tells the sides apart
        return record(async ? cuMemcpyAsync(dptr(dst), dptr(src), bytes, stream)
                            : cuMemcpy(dptr(dst), dptr(src), bytes));
    case cudaMemcpyHostToHost:
        // Ordered after earlier work, as the runtime's host-to-host copy is.
        if (CUresult r = async ? cuStreamSynchronize(stream) : cuCtxSynchronize())
            return record(r);
        memmove(dst, src, bytes);
        return cudaSuccess;
    }
    return record(cudaErrorInvalidMemcpyDirection);
}

} // namespace

extern "C" {

cudaError_t cudaMalloc(void** p, size_t bytes)
{
    GUEST_API_LOCK();
    if (p == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    if (bytes == 0) { // as the runtime: success, a null pointer
        *p = nullptr;
        return cudaSuccess;
    }
    CUdeviceptr d = 0;
    if (CUresult r = cuMemAlloc(&d, bytes))
        return record(r);
    *p = reinterpret_cast<void*>(d);
    return cudaSuccess;
}

cudaError_t cudaFree(void* p)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (p == nullptr)
        return cudaSuccess;
    return record(cuMemFree(dptr(p)));
}

cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned flags)
{
    GUEST_API_LOCK();
    constexpr unsigned kKnown = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if (p == nullptr || (flags & ~kKnown) != 0)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    // cudaHostAlloc* flags are the CU_MEMHOSTALLOC_* numbers.
    return record(cuMemHostAlloc(p, bytes, flags));
}

cudaError_t cudaMallocHost(void** p, size_t bytes)
{
    GUEST_API_LOCK();
    return cudaHostAlloc(p, bytes, cudaHostAllocDefault);
}

cudaError_t cudaFreeHost(void* p)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (p == nullptr)
        return cudaSuccess;
    return record(cuMemFreeHost(p));
}

cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned flags)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if ((flags & cudaHostRegisterIoMemory) != 0)
        return record(cudaErrorNotSupported); // no device memory-mapped I/O in the guest
    if ((flags & ~(unsigned)(cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterReadOnly)) != 0)
        return record(cudaErrorInvalidValue);
    // cudaHostRegister* flags are the CU_MEMHOSTREGISTER_* numbers.
    return record(cuMemHostRegister(p, bytes, flags));
}

cudaError_t cudaHostUnregister(void* p)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemHostUnregister(p));
}

cudaError_t cudaHostGetDevicePointer(void** d, void* p, unsigned flags)
{
    GUEST_API_LOCK();
    if (d == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    CUdeviceptr out = 0;
    if (CUresult r = cuMemHostGetDevicePointer(&out, p, flags))
        return record(r);
    *d = reinterpret_cast<void*>(out);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return copy(dst, src, bytes, kind, nullptr, false);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return copy(dst, src, bytes, kind, stream, true);
}

cudaError_t cudaMemset(void* p, int value, size_t bytes)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemsetD8(dptr(p), static_cast<unsigned char>(value), bytes));
}

cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t stream)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuMemsetD8Async(dptr(p), static_cast<unsigned char>(value), bytes, stream));
}

cudaError_t cudaGetSymbolAddress(void** d, const void* symbol)
{
    GUEST_API_LOCK();
    if (d == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    CUdeviceptr p;
    size_t bytes;
    if (cudaError_t e = symbol_address(symbol, &p, &bytes))
        return record(e);
    *d = reinterpret_cast<void*>(p);
    return cudaSuccess;
}

cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol)
{
    GUEST_API_LOCK();
    if (size == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    CUdeviceptr p;
    return record(symbol_address(symbol, &p, size));
}

// The symbol's range [offset, offset + bytes) as a device address.
static cudaError_t symbol_range(const void* symbol, size_t bytes, size_t offset, CUdeviceptr* out)
{
    CUdeviceptr p;
    size_t size;
    if (cudaError_t e = symbol_address(symbol, &p, &size))
        return e;
    if (offset > size || bytes > size - offset)
        return cudaErrorInvalidValue;
    *out = p + offset;
    return cudaSuccess;
}

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t bytes, size_t offset, cudaMemcpyKind kind)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return record(cudaErrorInvalidMemcpyDirection);
    CUdeviceptr d;
    if (cudaError_t e = symbol_range(symbol, bytes, offset, &d))
        return record(e);
    return copy(reinterpret_cast<void*>(d), src, bytes, kind, nullptr, false);
}

cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t bytes, size_t offset, cudaMemcpyKind kind)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return record(cudaErrorInvalidMemcpyDirection);
    CUdeviceptr s;
    if (cudaError_t e = symbol_range(symbol, bytes, offset, &s))
        return record(e);
    return copy(dst, reinterpret_cast<const void*>(s), bytes, kind, nullptr, false);
}

} // extern "C"
