// cuBLAS level 1 in S, D, C and Z: axpy, scal, dot (dotu, dotc), nrm2,
// asum, iamax, iamin, copy, swap. One VGPU_OP_BLAS_LEVEL1 command each;
// host-mode results come back in the completion.
#include "guest-stub/cublas/cublas_internal.h"

using namespace guest::cublas;
using namespace kvmgpu::vgpu;

namespace {

constexpr uint32_t kS = VGPU_BLAS_R_32F, kD = VGPU_BLAS_R_64F, kC = VGPU_BLAS_C_32F, kZ = VGPU_BLAS_C_64F;

uint32_t element_bytes(uint32_t type) { return type == kS ? 4 : type == kD || type == kC ? 8 : 16; }

// One level-1 call; result_bytes > 0 for the routines that return a value.
cublasStatus_t level1(cublasHandle_t h, uint32_t routine, uint32_t type, int n, const void* x, int incx,
                      const void* y, int incy, const void* alpha, void* result, uint32_t result_bytes)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (result_bytes && !result)
        return CUBLAS_STATUS_INVALID_VALUE;
    vgpu_blas_level1 c{};
    c.head = head_of(h, routine);
    c.type = type;
    c.n = n;
    c.x = {dev(x), incx};
    c.y = {dev(y), incy};
    if (alpha)
        c.alpha = scalar_of(h, alpha, element_bytes(type));
    const bool host_result = result_bytes && h->pointer_mode == CUBLAS_POINTER_MODE_HOST;
    if (result_bytes && !host_result)
        c.result = dev(result);
    return submit(VGPU_OP_BLAS_LEVEL1, c, check_level1(c), host_result ? result : nullptr, host_result ? result_bytes : 0);
}

} // namespace

#define KVMGPU_AXPY(P, p, T, dt)                                                                              \
    cublasStatus_t cublas##P##axpy(cublasHandle_t h, int n, const T* alpha, const T* x, int incx, T* y, int incy) \
    {                                                                                                        \
        if (!alpha)                                                                                          \
            return CUBLAS_STATUS_INVALID_VALUE;                                                              \
        return level1(h, VGPU_BLAS_AXPY, dt, n, x, incx, y, incy, alpha, nullptr, 0);                     \
    }                                                                                                        \
    cublasStatus_t cublas##P##scal(cublasHandle_t h, int n, const T* alpha, T* x, int incx)                  \
    {                                                                                                        \
        if (!alpha)                                                                                          \
            return CUBLAS_STATUS_INVALID_VALUE;                                                              \
        return level1(h, VGPU_BLAS_SCAL, dt, n, x, incx, nullptr, 1, alpha, nullptr, 0);                  \
    }                                                                                                        \
    cublasStatus_t cublas##P##copy(cublasHandle_t h, int n, const T* x, int incx, T* y, int incy)            \
    {                                                                                                        \
        return level1(h, VGPU_BLAS_COPY, dt, n, x, incx, y, incy, nullptr, nullptr, 0);                   \
    }                                                                                                        \
    cublasStatus_t cublas##P##swap(cublasHandle_t h, int n, T* x, int incx, T* y, int incy)                  \
    {                                                                                                        \
        return level1(h, VGPU_BLAS_SWAP, dt, n, x, incx, y, incy, nullptr, nullptr, 0);                   \
    }                                                                                                        \
    cublasStatus_t cublasI##p##amax(cublasHandle_t h, int n, const T* x, int incx, int* result)              \
    {                                                                                                        \
        return level1(h, VGPU_BLAS_IAMAX, dt, n, x, incx, nullptr, 1, nullptr, result, 4);                \
    }                                                                                                        \
    cublasStatus_t cublasI##p##amin(cublasHandle_t h, int n, const T* x, int incx, int* result)              \
    {                                                                                                        \
        return level1(h, VGPU_BLAS_IAMIN, dt, n, x, incx, nullptr, 1, nullptr, result, 4);                \
    }
KVMGPU_AXPY(S, s, float, kS)
KVMGPU_AXPY(D, d, double, kD)
KVMGPU_AXPY(C, c, cuComplex, kC)
KVMGPU_AXPY(Z, z, cuDoubleComplex, kZ)
#undef KVMGPU_AXPY

// (I<t>amax and I<t>amin spell the type in lower case.)

// nrm2 and asum: a real result (Sc, Dz for the complex types).
#define KVMGPU_NORMS(P, T, R, dt)                                                                           \
    cublasStatus_t cublas##P##nrm2(cublasHandle_t h, int n, const T* x, int incx, R* result)                  \
    {                                                                                                         \
        return level1(h, VGPU_BLAS_NRM2, dt, n, x, incx, nullptr, 1, nullptr, result, sizeof(R));          \
    }                                                                                                         \
    cublasStatus_t cublas##P##asum(cublasHandle_t h, int n, const T* x, int incx, R* result)                  \
    {                                                                                                         \
        return level1(h, VGPU_BLAS_ASUM, dt, n, x, incx, nullptr, 1, nullptr, result, sizeof(R));          \
    }
KVMGPU_NORMS(S, float, float, kS)
KVMGPU_NORMS(D, double, double, kD)
KVMGPU_NORMS(Sc, cuComplex, float, kC)
KVMGPU_NORMS(Dz, cuDoubleComplex, double, kZ)
#undef KVMGPU_NORMS

#define KVMGPU_DOT(NAME, T, dt, routine)                                                                     \
    cublasStatus_t NAME(cublasHandle_t h, int n, const T* x, int incx, const T* y, int incy, T* result)        \
    {                                                                                                          \
        return level1(h, routine, dt, n, x, incx, y, incy, nullptr, result, sizeof(T));                     \
    }
KVMGPU_DOT(cublasSdot, float, kS, VGPU_BLAS_DOT)
KVMGPU_DOT(cublasDdot, double, kD, VGPU_BLAS_DOT)
KVMGPU_DOT(cublasCdotu, cuComplex, kC, VGPU_BLAS_DOT)
KVMGPU_DOT(cublasCdotc, cuComplex, kC, VGPU_BLAS_DOTC)
KVMGPU_DOT(cublasZdotu, cuDoubleComplex, kZ, VGPU_BLAS_DOT)
KVMGPU_DOT(cublasZdotc, cuDoubleComplex, kZ, VGPU_BLAS_DOTC)
#undef KVMGPU_DOT
