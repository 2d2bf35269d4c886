// The rules of each forwarded cuBLAS call, applied to its guest-written
// struct before anything else reads it: the enum values (types, transposes,
// fill modes), dimensions (>= 0), leading dimensions (>= max(1, rows), as
// cuBLAS requires), increments, batch counts, and the device range every
// operand covers (blas_extent.h). The device model then checks each range
// against the VM's allocations. One function per opcode; no state. Part of
// the guest/VMM contract: the guest's cuBLAS (guest-stub/cublas/) compiles
// the same file and refuses at the call what the VMM would.
#pragma once

#include <array>
#include <cstdint>

#include "kvmtool-gpu/abi/vgpu_blas_abi.h"

namespace kvmgpu::vgpu {

// The most matrices a GEMM_POINTERS call may name: the device model reads
// and checks three arrays of this many pointers on every call.
constexpr int64_t kBlasMaxPointerBatch = 1 << 20;
// ... and a strided call (nothing read; a bound on the library's work).
constexpr int64_t kBlasMaxStridedBatch = 1 << 24;

// One device range a call reads or writes, and the alignment its element
// needs (cuBLAS's: a misaligned operand faults on the GPU).
struct BlasOperand {
    uint64_t dptr = 0, bytes = 0;
    const char* name = "";
    uint64_t align = 1;
};

// What a checked call touches; `why` set: refused with `status`.
struct BlasPlan {
    uint32_t status = VGPU_SUCCESS;
    const char* why = nullptr;
    std::array<BlasOperand, 8> operands{};
    uint32_t count = 0;
    // GEMM_POINTERS: each listed A, B, C matrix's bytes (0: not read) and alignment.
    uint64_t matrix_bytes[3] = {0, 0, 0};
    uint64_t matrix_align[3] = {1, 1, 1};

    // `element`: the bytes of one element (its alignment, up to 16).
    void add(uint64_t dptr, uint64_t bytes, const char* name, uint64_t element) {
        operands[count++] = {dptr, bytes, name, element > 16 ? 16 : element};
    }
    BlasPlan& refuse(uint32_t s, const char* reason) {
        status = s, why = reason;
        return *this;
    }
};

// The bytes of the call's scalars (alpha, beta), by its types; 0 if none fit.
uint64_t blas_gemm_scalar_bytes(const vgpu_blas_gemm& c);

BlasPlan check_level1(const vgpu_blas_level1& c);
BlasPlan check_level2(const vgpu_blas_level2& c);
BlasPlan check_gemm(const vgpu_blas_gemm& c);
BlasPlan check_level3(const vgpu_blas_level3& c);

} // namespace kvmgpu::vgpu
