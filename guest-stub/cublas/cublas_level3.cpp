// cuBLAS level 3 besides gemm, in S, D, C and Z: trsm, syrk, geam. One
// VGPU_OP_BLAS_LEVEL3 command each, queued.
#include "guest-stub/cublas/cublas_internal.h"

using namespace guest::cublas;
using namespace kvmgpu::vgpu;

namespace {

cublasStatus_t send(cublasHandle_t h, vgpu_blas_level3& c, const void* alpha, const void* beta, uint32_t bytes)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!alpha || (c.head.routine != VGPU_BLAS_TRSM && !beta))
        return CUBLAS_STATUS_INVALID_VALUE;
    c.head = head_of(h, c.head.routine);
    c.alpha = scalar_of(h, alpha, bytes);
    if (beta)
        c.beta = scalar_of(h, beta, bytes);
    return submit(VGPU_OP_BLAS_LEVEL3, c, check_level3(c));
}

} // namespace

#define KVMGPU_LEVEL3(P, T, dt)                                                                                   \
    cublasStatus_t cublas##P##trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,                  \
                                   cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const T* alpha,    \
                                   const T* A, int lda, T* B, int ldb)                                              \
    {                                                                                                               \
        vgpu_blas_level3 c{};                                                                                       \
        c.head.routine = VGPU_BLAS_TRSM;                                                                            \
        c.type = dt;                                                                                              \
        c.side = side, c.uplo = uplo, c.transa = trans, c.diag = diag;                                              \
        c.m = m, c.n = n;                                                                                           \
        c.a = {guest::cublas::dev(A), lda, 0};                                                                      \
        c.b = {guest::cublas::dev(B), ldb, 0};                                                                      \
        return send(h, c, alpha, nullptr, sizeof(T));                                                               \
    }                                                                                                               \
    cublasStatus_t cublas##P##syrk(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,  \
                                   const T* alpha, const T* A, int lda, const T* beta, T* C, int ldc)               \
    {                                                                                                               \
        vgpu_blas_level3 c{};                                                                                       \
        c.head.routine = VGPU_BLAS_SYRK;                                                                            \
        c.type = dt;                                                                                              \
        c.uplo = uplo, c.transa = trans;                                                                            \
        c.n = n, c.k = k;                                                                                           \
        c.a = {guest::cublas::dev(A), lda, 0};                                                                      \
        c.c = {guest::cublas::dev(C), ldc, 0};                                                                      \
        return send(h, c, alpha, beta, sizeof(T));                                                                  \
    }                                                                                                               \
    cublasStatus_t cublas##P##geam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,      \
                                   const T* alpha, const T* A, int lda, const T* beta, const T* B, int ldb, T* C,   \
                                   int ldc)                                                                         \
    {                                                                                                               \
        vgpu_blas_level3 c{};                                                                                       \
        c.head.routine = VGPU_BLAS_GEAM;                                                                            \
        c.type = dt;                                                                                              \
        c.transa = ta, c.transb = tb;                                                                               \
        c.m = m, c.n = n;                                                                                           \
        c.a = {guest::cublas::dev(A), lda, 0};                                                                      \
        c.b = {guest::cublas::dev(B), ldb, 0};                                                                      \
        c.c = {guest::cublas::dev(C), ldc, 0};                                                                      \
        return send(h, c, alpha, beta, sizeof(T));                                                                  \
    }
KVMGPU_LEVEL3(S, float, VGPU_BLAS_R_32F)
KVMGPU_LEVEL3(D, double, VGPU_BLAS_R_64F)
KVMGPU_LEVEL3(C, cuComplex, VGPU_BLAS_C_32F)
KVMGPU_LEVEL3(Z, cuDoubleComplex, VGPU_BLAS_C_64F)
#undef KVMGPU_LEVEL3
