#include "kvmtool-gpu/abi/blas_checks.h"

#include <algorithm>

#include "kvmtool-gpu/abi/blas_extent.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint32_t kOpN = 0, kOpT = 1, kOpC = 2;   // cublasOperation_t
constexpr uint32_t kLower = 0, kUpper = 1;         // cublasFillMode_t
constexpr uint32_t kNonUnit = 0, kUnit = 1;        // cublasDiagType_t
constexpr uint32_t kLeft = 0, kRight = 1;          // cublasSideMode_t

bool op_ok(uint32_t op) { return op == kOpN || op == kOpT || op == kOpC; }
bool fill_ok(uint32_t f) { return f == kLower || f == kUpper; }
bool diag_ok(uint32_t d) { return d == kNonUnit || d == kUnit; }
bool side_ok(uint32_t s) { return s == kLeft || s == kRight; }
bool complex(uint32_t type) { return type == VGPU_BLAS_C_32F || type == VGPU_BLAS_C_64F; }
// The element types of the typed (S, D, C, Z) routines.
bool sdcz(uint32_t type) {
    return type == VGPU_BLAS_R_32F || type == VGPU_BLAS_R_64F || complex(type);
}
bool device_scalars(const vgpu_blas_head& h) { return h.flags & VGPU_BLAS_DEVICE_SCALARS; }
bool flags_ok(const vgpu_blas_head& h) { return (h.flags & ~uint32_t{VGPU_BLAS_DEVICE_SCALARS}) == 0; }
// The real type of the same precision (nrm2, asum results).
uint32_t real_of(uint32_t type) {
    return type == VGPU_BLAS_C_32F ? VGPU_BLAS_R_32F : type == VGPU_BLAS_C_64F ? VGPU_BLAS_R_64F : type;
}

// Adds a vector of n > 0 elements; false if its span is invalid.
bool add_vector(BlasPlan& p, const vgpu_blas_vector& v, int64_t n, uint64_t element, const char* name,
                bool zero_inc_ok) {
    const auto bytes = blas_vector_span(n, v.inc, element, zero_inc_ok);
    if (!bytes) return false;
    p.add(v.ptr, *bytes, name, element);
    return true;
}

// Adds a rows x cols matrix (skipped when either is 0, but the leading
// dimension is checked all the same, as cuBLAS does); false if invalid.
bool add_matrix(BlasPlan& p, const vgpu_blas_matrix& m, int64_t rows, int64_t cols, uint64_t element,
                const char* name) {
    if (m.ld < std::max<int64_t>(1, rows) || m.ld > INT32_MAX) return false;
    if (rows == 0 || cols == 0) return true;
    const auto bytes = blas_matrix_span(rows, cols, m.ld, element);
    if (!bytes) return false;
    p.add(m.ptr, *bytes, name, element);
    return true;
}

void add_scalar(BlasPlan& p, const vgpu_blas_head& h, const vgpu_blas_scalar& s, uint64_t bytes, const char* name) {
    if (device_scalars(h)) p.add(s.dptr, bytes, name, bytes);
}

bool all_zero(const vgpu_blas_scalar& s) {
    return std::all_of(std::begin(s.bytes), std::end(s.bytes), [](uint8_t b) { return b == 0; });
}
} // namespace

BlasPlan check_level1(const vgpu_blas_level1& c) {
    BlasPlan p;
    if (!flags_ok(c.head)) return p.refuse(VGPU_ERROR_INVALID_VALUE, "unknown BLAS flags");
    if (!sdcz(c.type)) return p.refuse(VGPU_ERROR_NOT_SUPPORTED, "level-1 type not S, D, C or Z");
    const uint64_t e = blas_element_bytes(c.type);
    bool x = true, y = false, alpha = false;
    uint64_t result = 0; // bytes of the result, 0: none
    switch (c.head.routine) {
    case VGPU_BLAS_AXPY: y = alpha = true; break;
    case VGPU_BLAS_SCAL: alpha = true; break;
    case VGPU_BLAS_DOTC:
        if (!complex(c.type)) return p.refuse(VGPU_ERROR_INVALID_VALUE, "dotc of a real type");
        [[fallthrough]];
    case VGPU_BLAS_DOT: y = true, result = e; break;
    case VGPU_BLAS_NRM2:
    case VGPU_BLAS_ASUM: result = blas_element_bytes(real_of(c.type)); break;
    case VGPU_BLAS_IAMAX:
    case VGPU_BLAS_IAMIN: result = 4; break;
    case VGPU_BLAS_COPY:
    case VGPU_BLAS_SWAP: y = true; break;
    default: return p.refuse(VGPU_ERROR_INVALID_VALUE, "not a level-1 routine");
    }
    if (alpha) add_scalar(p, c.head, c.alpha, e, "alpha");
    if (result && device_scalars(c.head)) p.add(c.result, result, "result", result);
    if (c.n <= 0) return p; // cuBLAS does nothing (a result is 0)
    if (x && !add_vector(p, c.x, c.n, e, "x", true)) return p.refuse(VGPU_ERROR_INVALID_VALUE, "vector x's span");
    if (y && !add_vector(p, c.y, c.n, e, "y", true)) return p.refuse(VGPU_ERROR_INVALID_VALUE, "vector y's span");
    return p;
}

BlasPlan check_level2(const vgpu_blas_level2& c) {
    BlasPlan p;
    if (!flags_ok(c.head)) return p.refuse(VGPU_ERROR_INVALID_VALUE, "unknown BLAS flags");
    if (!sdcz(c.type)) return p.refuse(VGPU_ERROR_NOT_SUPPORTED, "level-2 type not S, D, C or Z");
    const uint64_t e = blas_element_bytes(c.type);
    const int64_t m = c.m, n = c.n;
    switch (c.head.routine) {
    case VGPU_BLAS_GEMV: {
        if (!op_ok(c.trans) || m < 0 || n < 0 || c.x.inc == 0 || c.y.inc == 0)
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemv: trans, m, n or an increment");
        add_scalar(p, c.head, c.alpha, e, "alpha");
        add_scalar(p, c.head, c.beta, e, "beta");
        if (!add_matrix(p, c.a, m, n, e, "A")) return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemv: lda < max(1, m)");
        const int64_t xn = c.trans == kOpN ? n : m, yn = c.trans == kOpN ? m : n;
        if ((xn > 0 && !add_vector(p, c.x, xn, e, "x", false)) || (yn > 0 && !add_vector(p, c.y, yn, e, "y", false)))
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemv: a vector's span");
        return p;
    }
    case VGPU_BLAS_GERC:
        if (!complex(c.type)) return p.refuse(VGPU_ERROR_INVALID_VALUE, "gerc of a real type");
        [[fallthrough]];
    case VGPU_BLAS_GER: {
        if (m < 0 || n < 0 || c.x.inc == 0 || c.y.inc == 0)
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "ger: m, n or an increment");
        add_scalar(p, c.head, c.alpha, e, "alpha");
        if (!add_matrix(p, c.a, m, n, e, "A")) return p.refuse(VGPU_ERROR_INVALID_VALUE, "ger: lda < max(1, m)");
        if ((m > 0 && n > 0) && (!add_vector(p, c.x, m, e, "x", false) || !add_vector(p, c.y, n, e, "y", false)))
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "ger: a vector's span");
        return p;
    }
    case VGPU_BLAS_TRSV: {
        if (!fill_ok(c.uplo) || !op_ok(c.trans) || !diag_ok(c.diag) || n < 0 || c.x.inc == 0)
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "trsv: uplo, trans, diag, n or incx");
        if (!add_matrix(p, c.a, n, n, e, "A")) return p.refuse(VGPU_ERROR_INVALID_VALUE, "trsv: lda < max(1, n)");
        if (n > 0 && !add_vector(p, c.x, n, e, "x", false)) return p.refuse(VGPU_ERROR_INVALID_VALUE, "trsv: x's span");
        return p;
    }
    default: return p.refuse(VGPU_ERROR_INVALID_VALUE, "not a level-2 routine");
    }
}

uint64_t blas_gemm_scalar_bytes(const vgpu_blas_gemm& c) {
    if (c.head.routine == VGPU_BLAS_GEMM) return blas_element_bytes(c.ctype);
    const uint64_t width = complex(c.ctype) ? 2 : 1;
    switch (c.compute) {
    case VGPU_BLAS_COMPUTE_16F:
    case VGPU_BLAS_COMPUTE_16F_PEDANTIC: return 2 * width;
    case VGPU_BLAS_COMPUTE_32F:
    case VGPU_BLAS_COMPUTE_32F_PEDANTIC:
    case VGPU_BLAS_COMPUTE_32F_FAST_16F:
    case VGPU_BLAS_COMPUTE_32F_FAST_16BF:
    case VGPU_BLAS_COMPUTE_32F_FAST_TF32: return 4 * width;
    case VGPU_BLAS_COMPUTE_64F:
    case VGPU_BLAS_COMPUTE_64F_PEDANTIC: return 8 * width;
    default: return 0;
    }
}

namespace {
bool gemm_algo_ok(int32_t algo) {
    return algo == -1 || (algo >= 0 && algo <= 23) || (algo >= 99 && algo <= 115); // CUBLAS_GEMM_DEFAULT .. ALGO15_TENSOR_OP
}

// Adds one of gemm's operands in its form: a matrix, a strided batch, or
// the device array of `batch` pointers (the matrices' bytes kept for later).
bool add_gemm_operand(BlasPlan& p, const vgpu_blas_gemm& c, const vgpu_blas_matrix& mat, int64_t rows,
                      int64_t cols, uint64_t e, int index, const char* name) {
    if (mat.ld < std::max<int64_t>(1, rows) || mat.ld > INT32_MAX) return false;
    if (rows == 0 || cols == 0 || c.batch == 0) return true;
    const auto one = blas_matrix_span(rows, cols, mat.ld, e);
    if (!one) return false;
    if (c.form == VGPU_BLAS_GEMM_ONE) {
        p.add(mat.ptr, *one, name, e);
    } else if (c.form == VGPU_BLAS_GEMM_STRIDED) {
        const auto all = blas_strided_span(*one, mat.stride, c.batch, e);
        if (!all) return false;
        p.add(mat.ptr, *all, name, e);
    } else {
        p.add(mat.ptr, static_cast<uint64_t>(c.batch) * sizeof(uint64_t), name, sizeof(uint64_t));
        p.matrix_bytes[index] = *one;
        p.matrix_align[index] = e > 16 ? 16 : e;
    }
    return true;
}
} // namespace

BlasPlan check_gemm(const vgpu_blas_gemm& c) {
    BlasPlan p;
    if (!flags_ok(c.head)) return p.refuse(VGPU_ERROR_INVALID_VALUE, "unknown BLAS flags");
    if (c.head.routine == VGPU_BLAS_GEMM) {
        if (c.atype != c.btype || c.btype != c.ctype || c.compute != 0 || c.algo != -1)
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemm: types differ, or a compute type or algorithm given");
        if (!sdcz(c.ctype) && c.ctype != VGPU_BLAS_R_16F) return p.refuse(VGPU_ERROR_NOT_SUPPORTED, "gemm type not H, S, D, C or Z");
    } else if (c.head.routine == VGPU_BLAS_GEMM_EX) {
        if (!blas_element_bytes(c.atype) || !blas_element_bytes(c.btype) || !blas_element_bytes(c.ctype))
            return p.refuse(VGPU_ERROR_NOT_SUPPORTED, "gemmEx: an element type not offered");
        if (!gemm_algo_ok(c.algo)) return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemmEx: algorithm");
    } else {
        return p.refuse(VGPU_ERROR_INVALID_VALUE, "not a gemm routine");
    }
    const uint64_t scalar = blas_gemm_scalar_bytes(c);
    if (scalar == 0) return p.refuse(VGPU_ERROR_NOT_SUPPORTED, "gemmEx: compute type");
    if (!op_ok(c.transa) || !op_ok(c.transb) || c.m < 0 || c.n < 0 || c.k < 0)
        return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemm: trans, m, n or k");
    switch (c.form) {
    case VGPU_BLAS_GEMM_ONE:
        if (c.batch != 1) return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemm: one matrix, batch != 1");
        break;
    case VGPU_BLAS_GEMM_STRIDED:
        if (c.batch < 0 || c.batch > kBlasMaxStridedBatch) return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemm: batch count");
        break;
    case VGPU_BLAS_GEMM_POINTERS:
        if (c.batch < 0 || c.batch > kBlasMaxPointerBatch) return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemm: batch count");
        break;
    default: return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemm: form");
    }
    add_scalar(p, c.head, c.alpha, scalar, "alpha");
    add_scalar(p, c.head, c.beta, scalar, "beta");
    const bool na = c.transa == kOpN, nb = c.transb == kOpN;
    const int64_t m = c.m, n = c.n, k = c.k;
    const bool reads_ab = m > 0 && n > 0 && k > 0;
    if (!add_gemm_operand(p, c, c.a, na ? m : k, reads_ab ? (na ? k : m) : 0, blas_element_bytes(c.atype), 0, "A") ||
        !add_gemm_operand(p, c, c.b, nb ? k : n, reads_ab ? (nb ? n : k) : 0, blas_element_bytes(c.btype), 1, "B") ||
        !add_gemm_operand(p, c, c.c, m, n, blas_element_bytes(c.ctype), 2, "C"))
        return p.refuse(VGPU_ERROR_INVALID_VALUE, "gemm: a leading dimension, stride or span");
    return p;
}

BlasPlan check_level3(const vgpu_blas_level3& c) {
    BlasPlan p;
    if (!flags_ok(c.head)) return p.refuse(VGPU_ERROR_INVALID_VALUE, "unknown BLAS flags");
    if (!sdcz(c.type)) return p.refuse(VGPU_ERROR_NOT_SUPPORTED, "level-3 type not S, D, C or Z");
    const uint64_t e = blas_element_bytes(c.type);
    const int64_t m = c.m, n = c.n, k = c.k;
    switch (c.head.routine) {
    case VGPU_BLAS_TRSM: {
        if (!side_ok(c.side) || !fill_ok(c.uplo) || !op_ok(c.transa) || !diag_ok(c.diag) || m < 0 || n < 0)
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "trsm: side, uplo, trans, diag, m or n");
        add_scalar(p, c.head, c.alpha, e, "alpha");
        const int64_t an = c.side == kLeft ? m : n;
        if (!add_matrix(p, c.a, an, m > 0 && n > 0 ? an : 0, e, "A") || !add_matrix(p, c.b, m, n, e, "B"))
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "trsm: a leading dimension or span");
        return p;
    }
    case VGPU_BLAS_SYRK: {
        if (!fill_ok(c.uplo) || (c.transa != kOpN && c.transa != kOpT) || n < 0 || k < 0)
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "syrk: uplo, trans, n or k");
        add_scalar(p, c.head, c.alpha, e, "alpha");
        add_scalar(p, c.head, c.beta, e, "beta");
        const bool nt = c.transa == kOpN;
        if (!add_matrix(p, c.a, nt ? n : k, n > 0 ? (nt ? k : n) : 0, e, "A") || !add_matrix(p, c.c, n, n, e, "C"))
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "syrk: a leading dimension or span");
        return p;
    }
    case VGPU_BLAS_GEAM: {
        if (!op_ok(c.transa) || !op_ok(c.transb) || m < 0 || n < 0)
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "geam: trans, m or n");
        add_scalar(p, c.head, c.alpha, e, "alpha");
        add_scalar(p, c.head, c.beta, e, "beta");
        const bool na = c.transa == kOpN, nb = c.transb == kOpN;
        // cuBLAS reads no B when beta is a host zero and B is null.
        const bool reads_b = device_scalars(c.head) || !all_zero(c.beta) || c.b.ptr != 0;
        if (!add_matrix(p, c.a, na ? m : n, na ? n : m, e, "A") ||
            (reads_b && !add_matrix(p, c.b, nb ? m : n, nb ? n : m, e, "B")) || !add_matrix(p, c.c, m, n, e, "C"))
            return p.refuse(VGPU_ERROR_INVALID_VALUE, "geam: a leading dimension or span");
        return p;
    }
    default: return p.refuse(VGPU_ERROR_INVALID_VALUE, "not a level-3 routine");
    }
}

} // namespace kvmgpu::vgpu
