// cuBLAS's host <-> device copies (Set/GetVector, Set/GetMatrix and their
// Async forms) over the guest runtime's copies: contiguous data in one
// copy; a strided host vector is gathered into one buffer first (a
// pageable source is read before the copy returns, so Async stays
// asynchronous); every other stride goes element by element (2-D copies).
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "guest-stub/cublas/cublas_internal.h"
#include "guest-stub/platform/api_lock.h"

namespace {

cublasStatus_t from_copy(cudaError_t e)
{
    return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_MAPPING_ERROR;
}

// n elements of `size` bytes from src (`sinc` elements apart) to dst (`dinc` apart).
cublasStatus_t copy_vector(int n, int size, const void* src, int sinc, void* dst, int dinc, cudaMemcpyKind kind,
                           cudaStream_t stream, bool async)
{
    if (n < 0 || size <= 0 || sinc <= 0 || dinc <= 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (n == 0)
        return CUBLAS_STATUS_SUCCESS;
    const size_t es = static_cast<size_t>(size), count = static_cast<size_t>(n);
    size_t bytes;
    if (__builtin_mul_overflow(es, count, &bytes))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (sinc == 1 && dinc == 1)
        return from_copy(async ? cudaMemcpyAsync(dst, src, bytes, kind, stream) : cudaMemcpy(dst, src, bytes, kind));
    if (kind == cudaMemcpyHostToDevice && dinc == 1) { // gather the host vector, one copy
        uint8_t* packed = static_cast<uint8_t*>(malloc(bytes));
        if (!packed)
            return CUBLAS_STATUS_ALLOC_FAILED;
        for (size_t i = 0; i < count; ++i)
            memcpy(packed + i * es, static_cast<const uint8_t*>(src) + i * es * static_cast<size_t>(sinc), es);
        const cudaError_t e = async ? cudaMemcpyAsync(dst, packed, bytes, kind, stream) : cudaMemcpy(dst, packed, bytes, kind);
        free(packed);
        return from_copy(e);
    }
    const size_t dpitch = es * static_cast<size_t>(dinc), spitch = es * static_cast<size_t>(sinc);
    return from_copy(async ? cudaMemcpy2DAsync(dst, dpitch, src, spitch, es, count, kind, stream)
                           : cudaMemcpy2D(dst, dpitch, src, spitch, es, count, kind));
}

// rows x cols elements, column-major, leading dimensions lda (src) and ldb
// (dst). As cuBLAS: the parameters refused are those below; a leading
// dimension below rows reaches the 2-D copy, which refuses its pitch
// (MAPPING_ERROR).
cublasStatus_t copy_matrix(int rows, int cols, int size, const void* src, int lda, void* dst, int ldb,
                           cudaMemcpyKind kind, cudaStream_t stream, bool async)
{
    if (rows < 0 || cols < 0 || size <= 0 || lda <= 0 || ldb <= 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (rows == 0 || cols == 0)
        return CUBLAS_STATUS_SUCCESS;
    const size_t es = static_cast<size_t>(size);
    const size_t width = es * static_cast<size_t>(rows);
    const size_t spitch = es * static_cast<size_t>(lda), dpitch = es * static_cast<size_t>(ldb);
    return from_copy(async ? cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, static_cast<size_t>(cols), kind, stream)
                           : cudaMemcpy2D(dst, dpitch, src, spitch, width, static_cast<size_t>(cols), kind));
}

} // namespace

cublasStatus_t cublasSetVector(int n, int elemSize, const void* x, int incx, void* devicePtr, int incy)
{
    GUEST_API_LOCK();
    return copy_vector(n, elemSize, x, incx, devicePtr, incy, cudaMemcpyHostToDevice, nullptr, false);
}

cublasStatus_t cublasGetVector(int n, int elemSize, const void* x, int incx, void* y, int incy)
{
    GUEST_API_LOCK();
    return copy_vector(n, elemSize, x, incx, y, incy, cudaMemcpyDeviceToHost, nullptr, false);
}

cublasStatus_t cublasSetVectorAsync(int n, int elemSize, const void* hostPtr, int incx, void* devicePtr, int incy,
                                    cudaStream_t stream)
{
    GUEST_API_LOCK();
    return copy_vector(n, elemSize, hostPtr, incx, devicePtr, incy, cudaMemcpyHostToDevice, stream, true);
}

cublasStatus_t cublasGetVectorAsync(int n, int elemSize, const void* devicePtr, int incx, void* hostPtr, int incy,
                                    cudaStream_t stream)
{
    GUEST_API_LOCK();
    return copy_vector(n, elemSize, devicePtr, incx, hostPtr, incy, cudaMemcpyDeviceToHost, stream, true);
}

cublasStatus_t cublasSetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb)
{
    GUEST_API_LOCK();
    return copy_matrix(rows, cols, elemSize, A, lda, B, ldb, cudaMemcpyHostToDevice, nullptr, false);
}

cublasStatus_t cublasGetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb)
{
    GUEST_API_LOCK();
    return copy_matrix(rows, cols, elemSize, A, lda, B, ldb, cudaMemcpyDeviceToHost, nullptr, false);
}

cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb,
                                    cudaStream_t stream)
{
    GUEST_API_LOCK();
    return copy_matrix(rows, cols, elemSize, A, lda, B, ldb, cudaMemcpyHostToDevice, stream, true);
}

cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb,
                                    cudaStream_t stream)
{
    GUEST_API_LOCK();
    return copy_matrix(rows, cols, elemSize, A, lda, B, ldb, cudaMemcpyDeviceToHost, stream, true);
}
