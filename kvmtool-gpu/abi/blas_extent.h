// How many bytes a cuBLAS operand spans from its first element: the
// arithmetic the device model uses to check a call's vectors and matrices
// against the VM's allocations. Every function refuses (nullopt) what
// cuBLAS itself refuses (a leading dimension below max(1, rows), a zero
// increment where one is not allowed) and any product that would overflow
// 64 bits. Guest-controlled values only; no state.
#pragma once

#include <cstdint>
#include <optional>

namespace kvmgpu::vgpu {

// Bytes of one element of a cudaDataType the forwarded calls take; 0 for any other.
uint64_t blas_element_bytes(uint32_t type);

// n > 0 elements, `inc` apart (either sign: cuBLAS walks a negative
// increment backwards over the same span; 0 when zero_inc_ok, one element).
std::optional<uint64_t> blas_vector_span(int64_t n, int64_t inc, uint64_t element, bool zero_inc_ok = false);

// A column-major rows x cols matrix (both > 0) with leading dimension ld.
std::optional<uint64_t> blas_matrix_span(int64_t rows, int64_t cols, int64_t ld, uint64_t element);

// `batch` > 0 matrices of `one` bytes, `stride` >= 0 elements apart.
std::optional<uint64_t> blas_strided_span(uint64_t one, int64_t stride, int64_t batch, uint64_t element);

} // namespace kvmgpu::vgpu
