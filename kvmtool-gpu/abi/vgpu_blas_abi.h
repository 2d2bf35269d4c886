/* cuBLAS through the vGPU: the payloads of the VGPU_OP_BLAS_* compute
 * opcodes (vgpu_abi.h). The guest library (guest-stub/cublas/) fills them
 * from cuBLAS's own arguments; the VMM checks every field and calls the
 * host's cuBLAS (or a reference on the host backend).
 *
 * Numbers are cuBLAS's and CUDA's own: element types are cudaDataType
 * values, compute types cublasComputeType_t, operations cublasOperation_t,
 * fill modes, diagonals and sides theirs (the VMM static_asserts that
 * against cublas_v2.h). Dimensions and leading dimensions are cuBLAS's
 * ints; increments and batch strides are in elements. Device pointers are
 * the VM's device addresses.
 *
 * Scalars: with VGPU_BLAS_DEVICE_SCALARS clear (CUBLAS_POINTER_MODE_HOST),
 * alpha and beta are values in `scalar.bytes` (a half, float, double or
 * complex as the call's scalar type says, little-endian, from byte 0) and a
 * level-1 result comes back in the completion's result[0..1] the same way.
 * With it set (CUBLAS_POINTER_MODE_DEVICE), scalar.dptr and `result` are
 * device addresses, checked like any operand. Freestanding-safe. */
#ifndef KVMGPU_ABI_VGPU_BLAS_ABI_H
#define KVMGPU_ABI_VGPU_BLAS_ABI_H

#include <stdint.h>

#include "kvmtool-gpu/abi/vgpu_abi.h"

/* Element types (cudaDataType_t). */
#define VGPU_BLAS_R_32F 0u
#define VGPU_BLAS_R_64F 1u
#define VGPU_BLAS_R_16F 2u
#define VGPU_BLAS_C_32F 4u
#define VGPU_BLAS_C_64F 5u
#define VGPU_BLAS_R_16BF 14u

/* Compute types (cublasComputeType_t) GEMM_EX accepts. */
#define VGPU_BLAS_COMPUTE_16F 64u
#define VGPU_BLAS_COMPUTE_16F_PEDANTIC 65u
#define VGPU_BLAS_COMPUTE_32F 68u
#define VGPU_BLAS_COMPUTE_32F_PEDANTIC 69u
#define VGPU_BLAS_COMPUTE_64F 70u
#define VGPU_BLAS_COMPUTE_64F_PEDANTIC 71u
#define VGPU_BLAS_COMPUTE_32F_FAST_16F 74u
#define VGPU_BLAS_COMPUTE_32F_FAST_16BF 75u
#define VGPU_BLAS_COMPUTE_32F_FAST_TF32 77u

#define VGPU_BLAS_DEVICE_SCALARS 0x1u /* head.flags: alpha, beta and result are device addresses */

/* Routines (head.routine), by opcode. */
enum vgpu_blas_routine {
    /* VGPU_OP_BLAS_LEVEL1 */
    VGPU_BLAS_AXPY = 1,  /* y = alpha x + y */
    VGPU_BLAS_SCAL = 2,  /* x = alpha x */
    VGPU_BLAS_DOT = 3,   /* result = x . y (complex: unconjugated, dotu) */
    VGPU_BLAS_DOTC = 4,  /* result = conj(x) . y (complex only) */
    VGPU_BLAS_NRM2 = 5,  /* result = ||x||2 (a real of the type's precision) */
    VGPU_BLAS_ASUM = 6,  /* result = sum |re| + |im| (real, as nrm2) */
    VGPU_BLAS_IAMAX = 7, /* result = 1-based index of the first largest |x| (int32) */
    VGPU_BLAS_IAMIN = 8,
    VGPU_BLAS_COPY = 9,  /* y = x */
    VGPU_BLAS_SWAP = 10, /* x <-> y */
    /* VGPU_OP_BLAS_LEVEL2 */
    VGPU_BLAS_GEMV = 20, /* y = alpha op(A) x + beta y, A m x n */
    VGPU_BLAS_GER = 21,  /* A = alpha x y^T + A (complex: geru) */
    VGPU_BLAS_GERC = 22, /* A = alpha x y^H + A (complex only) */
    VGPU_BLAS_TRSV = 23, /* x = op(A)^-1 x, A n x n triangular */
    /* VGPU_OP_BLAS_GEMM */
    VGPU_BLAS_GEMM = 30,    /* cublas<t>gemm and its batched forms: a = b = c type, its own compute */
    VGPU_BLAS_GEMM_EX = 31, /* cublasGemmEx and its batched forms: types and compute type given */
    /* VGPU_OP_BLAS_LEVEL3 */
    VGPU_BLAS_TRSM = 40, /* B = alpha op(A)^-1 B (side left) or alpha B op(A)^-1 (right), in place */
    VGPU_BLAS_SYRK = 41, /* C = alpha op(A) op(A)^T + beta C, C n x n, the uplo triangle */
    VGPU_BLAS_GEAM = 42  /* C = alpha op(A) + beta op(B), m x n */
};

/* VGPU_OP_BLAS_GEMM's forms. */
#define VGPU_BLAS_GEMM_ONE 0u
#define VGPU_BLAS_GEMM_STRIDED 1u  /* batch matrices at a + i * a.stride elements ... */
#define VGPU_BLAS_GEMM_POINTERS 2u /* a.ptr, b.ptr, c.ptr: device arrays of batch device pointers */

struct vgpu_blas_head {
    uint64_t handle;  /* from BLAS_CREATE */
    uint32_t routine; /* vgpu_blas_routine */
    uint32_t flags;   /* VGPU_BLAS_DEVICE_SCALARS */
};

union vgpu_blas_scalar {
    uint8_t bytes[16]; /* host pointer mode: the value */
    uint64_t dptr;     /* device pointer mode: where it is */
};

struct vgpu_blas_vector {
    uint64_t ptr;
    int64_t inc; /* elements; cuBLAS's int */
};

struct vgpu_blas_matrix {
    uint64_t ptr;
    int64_t ld;     /* elements; cuBLAS's int, >= max(1, rows) */
    int64_t stride; /* GEMM_STRIDED only: elements between matrices, >= 0 */
};

struct vgpu_blas_level1 {
    struct vgpu_blas_head head;
    uint32_t type; /* R_32F, R_64F, C_32F, C_64F */
    int32_t n;     /* <= 0: nothing to do */
    struct vgpu_blas_vector x, y;
    union vgpu_blas_scalar alpha; /* axpy, scal */
    uint64_t result;              /* device mode: where dot, nrm2, asum, iamax, iamin write */
};

struct vgpu_blas_level2 {
    struct vgpu_blas_head head;
    uint32_t type;
    uint32_t trans; /* gemv, trsv */
    uint32_t uplo;  /* trsv */
    uint32_t diag;  /* trsv */
    int32_t m, n;   /* trsv: n only */
    union vgpu_blas_scalar alpha, beta;
    struct vgpu_blas_matrix a;
    struct vgpu_blas_vector x, y;
};

struct vgpu_blas_gemm {
    struct vgpu_blas_head head;
    uint32_t transa, transb;
    int32_t m, n, k;
    int32_t batch; /* 1 for GEMM_ONE */
    uint32_t form; /* VGPU_BLAS_GEMM_* */
    uint32_t atype, btype, ctype; /* the same for GEMM */
    uint32_t compute;             /* GEMM_EX: a VGPU_BLAS_COMPUTE_*; GEMM: 0 */
    int32_t algo;                 /* cublasGemmAlgo_t (GEMM_EX); GEMM: -1 */
    union vgpu_blas_scalar alpha, beta;
    struct vgpu_blas_matrix a, b, c;
};

struct vgpu_blas_level3 {
    struct vgpu_blas_head head;
    uint32_t type;
    uint32_t side, uplo, diag; /* trsm (uplo: syrk too) */
    uint32_t transa, transb;   /* syrk, trsm: transa */
    int32_t m, n, k;           /* trsm: m, n; syrk: n, k; geam: m, n */
    union vgpu_blas_scalar alpha, beta;
    struct vgpu_blas_matrix a, b, c; /* trsm: a, b; syrk: a, c; geam: a, b, c */
};

#ifdef __cplusplus
static_assert(sizeof(struct vgpu_blas_level1) <= VGPU_PAYLOAD_BYTES, "level-1 call fits a slot");
static_assert(sizeof(struct vgpu_blas_level2) <= VGPU_PAYLOAD_BYTES, "level-2 call fits a slot");
static_assert(sizeof(struct vgpu_blas_gemm) <= VGPU_PAYLOAD_BYTES, "gemm call fits a slot");
static_assert(sizeof(struct vgpu_blas_level3) <= VGPU_PAYLOAD_BYTES, "level-3 call fits a slot");
#endif

#endif
