// cuBLAS's gemm family: cublas<t>gemm (H, S, D, C, Z), cublasGemmEx, and
// their strided-batched and pointer-array batched forms. One
// VGPU_OP_BLAS_GEMM command each, queued. A batched call's pointer arrays
// stay in device memory: the VMM reads and checks them.
#include "guest-stub/cublas/cublas_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cublas;
using namespace kvmgpu::vgpu;

namespace {

struct Operands {
    const void *a, *b, *c; // batched: the device arrays of pointers
    int lda, ldb, ldc;
    long long sa = 0, sb = 0, sc = 0; // strided batches
};

cublasStatus_t gemm(cublasHandle_t h, uint32_t routine, uint32_t form, cublasOperation_t ta, cublasOperation_t tb,
                    int m, int n, int k, const void* alpha, const void* beta, const Operands& o, int batch,
                    uint32_t atype, uint32_t btype, uint32_t ctype, uint32_t compute, int algo)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    vgpu_blas_gemm c{};
    c.head = head_of(h, routine);
    c.transa = ta, c.transb = tb;
    c.m = m, c.n = n, c.k = k;
    c.batch = batch;
    c.form = form;
    c.atype = atype, c.btype = btype, c.ctype = ctype;
    c.compute = compute;
    c.algo = algo;
    c.a = {dev(o.a), o.lda, o.sa};
    c.b = {dev(o.b), o.ldb, o.sb};
    c.c = {dev(o.c), o.ldc, o.sc};
    const uint64_t scalar = blas_gemm_scalar_bytes(c);
    c.alpha = scalar_of(h, alpha, scalar);
    c.beta = scalar_of(h, beta, scalar);
    return submit(VGPU_OP_BLAS_GEMM, c, check_gemm(c));
}

} // namespace

#define KVMGPU_GEMM(P, T, dt)                                                                                        \
    cublasStatus_t cublas##P##gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,  \
                                   const T* alpha, const T* A, int lda, const T* B, int ldb, const T* beta, T* C,      \
                                   int ldc)                                                                            \
    {                                                                                                                  \
        return gemm(h, VGPU_BLAS_GEMM, VGPU_BLAS_GEMM_ONE, ta, tb, m, n, k, alpha, beta, {A, B, C, lda, ldb, ldc}, 1,  \
                    dt, dt, dt, 0, CUBLAS_GEMM_DEFAULT);                                                         \
    }                                                                                                                  \
    cublasStatus_t cublas##P##gemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,  \
                                                 int n, int k, const T* alpha, const T* A, int lda, long long sa,      \
                                                 const T* B, int ldb, long long sb, const T* beta, T* C, int ldc,      \
                                                 long long sc, int batch)                                              \
    {                                                                                                                  \
        return gemm(h, VGPU_BLAS_GEMM, VGPU_BLAS_GEMM_STRIDED, ta, tb, m, n, k, alpha, beta,                           \
                    {A, B, C, lda, ldb, ldc, sa, sb, sc}, batch, dt, dt, dt, 0, CUBLAS_GEMM_DEFAULT);            \
    }                                                                                                                  \
    cublasStatus_t cublas##P##gemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,   \
                                          int k, const T* alpha, const T* const A[], int lda, const T* const B[],      \
                                          int ldb, const T* beta, T* const C[], int ldc, int batch)                    \
    {                                                                                                                  \
        return gemm(h, VGPU_BLAS_GEMM, VGPU_BLAS_GEMM_POINTERS, ta, tb, m, n, k, alpha, beta,                          \
                    {A, B, C, lda, ldb, ldc}, batch, dt, dt, dt, 0, CUBLAS_GEMM_DEFAULT);                        \
    }
KVMGPU_GEMM(H, __half, VGPU_BLAS_R_16F)
KVMGPU_GEMM(S, float, VGPU_BLAS_R_32F)
KVMGPU_GEMM(D, double, VGPU_BLAS_R_64F)
KVMGPU_GEMM(C, cuComplex, VGPU_BLAS_C_32F)
KVMGPU_GEMM(Z, cuDoubleComplex, VGPU_BLAS_C_64F)
#undef KVMGPU_GEMM

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    GUEST_API_LOCK();
    return gemm(h, VGPU_BLAS_GEMM_EX, VGPU_BLAS_GEMM_ONE, ta, tb, m, n, k, alpha, beta, {A, B, C, lda, ldb, ldc}, 1,
                Atype, Btype, Ctype, compute, algo);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
                                          long long sa, const void* B, cudaDataType Btype, int ldb, long long sb,
                                          const void* beta, void* C, cudaDataType Ctype, int ldc, long long sc,
                                          int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    GUEST_API_LOCK();
    return gemm(h, VGPU_BLAS_GEMM_EX, VGPU_BLAS_GEMM_STRIDED, ta, tb, m, n, k, alpha, beta,
                {A, B, C, lda, ldb, ldc, sa, sb, sc}, batch, Atype, Btype, Ctype, compute, algo);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                   const void* alpha, const void* const A[], cudaDataType Atype, int lda,
                                   const void* const B[], cudaDataType Btype, int ldb, const void* beta,
                                   void* const C[], cudaDataType Ctype, int ldc, int batch,
                                   cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    GUEST_API_LOCK();
    return gemm(h, VGPU_BLAS_GEMM_EX, VGPU_BLAS_GEMM_POINTERS, ta, tb, m, n, k, alpha, beta,
                {A, B, C, lda, ldb, ldc}, batch, Atype, Btype, Ctype, compute, algo);
}
