#include "kvmtool-gpu/abi/blas_extent.h"

#include "kvmtool-gpu/abi/vgpu_blas_abi.h"

namespace kvmgpu::vgpu {

uint64_t blas_element_bytes(uint32_t type) {
    switch (type) {
    case VGPU_BLAS_R_16F:
    case VGPU_BLAS_R_16BF: return 2;
    case VGPU_BLAS_R_32F: return 4;
    case VGPU_BLAS_R_64F:
    case VGPU_BLAS_C_32F: return 8;
    case VGPU_BLAS_C_64F: return 16;
    default: return 0;
    }
}

std::optional<uint64_t> blas_vector_span(int64_t n, int64_t inc, uint64_t element, bool zero_inc_ok) {
    if (n <= 0 || element == 0 || inc < -INT32_MAX || inc > INT32_MAX) return std::nullopt; // cuBLAS's int
    if (inc == 0 && !zero_inc_ok) return std::nullopt;
    const uint64_t step = static_cast<uint64_t>(inc < 0 ? -inc : inc);
    uint64_t last = 0, elements = 0, bytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(n - 1), step, &last) ||
        __builtin_add_overflow(last, uint64_t{1}, &elements) || __builtin_mul_overflow(elements, element, &bytes))
        return std::nullopt;
    return bytes;
}

std::optional<uint64_t> blas_matrix_span(int64_t rows, int64_t cols, int64_t ld, uint64_t element) {
    if (rows <= 0 || cols <= 0 || element == 0 || ld < rows || ld > INT32_MAX) return std::nullopt; // cuBLAS's int
    uint64_t before_last = 0, elements = 0, bytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(cols - 1), static_cast<uint64_t>(ld), &before_last) ||
        __builtin_add_overflow(before_last, static_cast<uint64_t>(rows), &elements) ||
        __builtin_mul_overflow(elements, element, &bytes))
        return std::nullopt;
    return bytes;
}

std::optional<uint64_t> blas_strided_span(uint64_t one, int64_t stride, int64_t batch, uint64_t element) {
    if (batch <= 0 || stride < 0 || element == 0) return std::nullopt;
    uint64_t last_start = 0, bytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(batch - 1), static_cast<uint64_t>(stride), &last_start) ||
        __builtin_mul_overflow(last_start, element, &last_start) || __builtin_add_overflow(last_start, one, &bytes))
        return std::nullopt;
    return bytes;
}

} // namespace kvmgpu::vgpu
