// cuBLAS level 2 in S, D, C and Z: gemv, ger (geru, gerc), trsv. One
// VGPU_OP_BLAS_LEVEL2 command each, queued.
#include "guest-stub/cublas/cublas_internal.h"

using namespace guest::cublas;
using namespace kvmgpu::vgpu;

namespace {

vgpu_blas_level2 level2(cublasHandle_t h, uint32_t routine, uint32_t type, int m, int n, const void* A, int lda,
                        const void* x, int incx, const void* y, int incy)
{
    vgpu_blas_level2 c{};
    c.head = head_of(h, routine);
    c.type = type;
    c.m = m;
    c.n = n;
    c.a = {dev(A), lda, 0};
    c.x = {dev(x), incx};
    c.y = {dev(y), incy};
    return c;
}

cublasStatus_t send(const vgpu_blas_level2& c) { return submit(VGPU_OP_BLAS_LEVEL2, c, check_level2(c)); }

} // namespace

#define KVMGPU_LEVEL2(P, T, dt)                                                                                  \
    cublasStatus_t cublas##P##gemv(cublasHandle_t h, cublasOperation_t trans, int m, int n, const T* alpha,        \
                                   const T* A, int lda, const T* x, int incx, const T* beta, T* y, int incy)       \
    {                                                                                                              \
        if (!h)                                                                                                    \
            return CUBLAS_STATUS_NOT_INITIALIZED;                                                                  \
        if (!alpha || !beta)                                                                                       \
            return CUBLAS_STATUS_INVALID_VALUE;                                                                    \
        vgpu_blas_level2 c = level2(h, VGPU_BLAS_GEMV, dt, m, n, A, lda, x, incx, y, incy);                    \
        c.trans = trans;                                                                                           \
        c.alpha = scalar_of(h, alpha, sizeof(T));                                                                  \
        c.beta = scalar_of(h, beta, sizeof(T));                                                                    \
        return send(c);                                                                                            \
    }                                                                                                              \
    cublasStatus_t cublas##P##trsv(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans,              \
                                   cublasDiagType_t diag, int n, const T* A, int lda, T* x, int incx)              \
    {                                                                                                              \
        if (!h)                                                                                                    \
            return CUBLAS_STATUS_NOT_INITIALIZED;                                                                  \
        vgpu_blas_level2 c = level2(h, VGPU_BLAS_TRSV, dt, 0, n, A, lda, x, incx, nullptr, 1);                 \
        c.uplo = uplo, c.trans = trans, c.diag = diag;                                                             \
        return send(c);                                                                                            \
    }
KVMGPU_LEVEL2(S, float, VGPU_BLAS_R_32F)
KVMGPU_LEVEL2(D, double, VGPU_BLAS_R_64F)
KVMGPU_LEVEL2(C, cuComplex, VGPU_BLAS_C_32F)
KVMGPU_LEVEL2(Z, cuDoubleComplex, VGPU_BLAS_C_64F)
#undef KVMGPU_LEVEL2

#define KVMGPU_GER(NAME, T, dt, routine)                                                                         \
    cublasStatus_t NAME(cublasHandle_t h, int m, int n, const T* alpha, const T* x, int incx, const T* y, int incy, \
                        T* A, int lda)                                                                             \
    {                                                                                                              \
        if (!h)                                                                                                    \
            return CUBLAS_STATUS_NOT_INITIALIZED;                                                                  \
        if (!alpha)                                                                                                \
            return CUBLAS_STATUS_INVALID_VALUE;                                                                    \
        vgpu_blas_level2 c = level2(h, routine, dt, m, n, A, lda, x, incx, y, incy);                           \
        c.alpha = scalar_of(h, alpha, sizeof(T));                                                                  \
        return send(c);                                                                                            \
    }
KVMGPU_GER(cublasSger, float, VGPU_BLAS_R_32F, VGPU_BLAS_GER)
KVMGPU_GER(cublasDger, double, VGPU_BLAS_R_64F, VGPU_BLAS_GER)
KVMGPU_GER(cublasCgeru, cuComplex, VGPU_BLAS_C_32F, VGPU_BLAS_GER)
KVMGPU_GER(cublasCgerc, cuComplex, VGPU_BLAS_C_32F, VGPU_BLAS_GERC)
KVMGPU_GER(cublasZgeru, cuDoubleComplex, VGPU_BLAS_C_64F, VGPU_BLAS_GER)
KVMGPU_GER(cublasZgerc, cuDoubleComplex, VGPU_BLAS_C_64F, VGPU_BLAS_GERC)
#undef KVMGPU_GER
