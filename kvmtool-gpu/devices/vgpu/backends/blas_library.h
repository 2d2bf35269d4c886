// What the device model needs from a BLAS library on one device: cuBLAS's
// calls in host terms. A backend offers one through GpuBackend::blas(): the
// CUDA backend the host's libcublas (cuda_blas.h), the host backend a CPU
// reference (host_blas.h). Every call struct has been checked by the device
// model (blas_checks.h): types, transposes, dimensions, leading dimensions,
// and that every operand lies in the VM's device memory. Methods return a
// vgpu_status and never throw.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kvmtool-gpu/abi/vgpu_blas_abi.h"
#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

using BackendBlas = uintptr_t; // a cublasHandle_t, or the reference's id

// What each cuBLAS handle costs the VM's device-memory quota: the library's
// default workspace (32 MiB on Hopper, cuBLAS's documentation) and room for
// its own state.
constexpr uint64_t kBlasHandleCharge = 40ull << 20;

// A level-1 result in host pointer mode: the value's bytes (result[0..1]).
struct BlasResult {
    uint64_t bits[2] = {0, 0};
};

// GEMM_POINTERS: the batch's A, B and C addresses, read out of the guest's
// device arrays and each checked; the library uses these, never the guest's.
struct BlasPointers {
    std::span<const uint64_t> a, b, c;
    // The same lists as this handle's previous GEMM_POINTERS call, with no
    // command between (the device model's cache): a copy the library kept
    // on the device may be used as it is.
    bool same_as_last = false;
};

class BlasLibrary {
public:
    virtual ~BlasLibrary() = default;
    // The backend's context went and took every handle's memory with it.
    virtual void forget_all() = 0;

    // Where the library came from, for the log ("libcublas 13.1.0 from /usr/...").
    virtual std::string describe() const = 0;
    virtual Status create(BackendBlas* out) = 0;
    virtual Status destroy(BackendBlas h) = 0;
    virtual Status set_stream(BackendBlas h, BackendStream s) = 0;
    virtual Status set_math_mode(BackendBlas h, uint32_t mode) = 0;
    // dptr 0: back to the library's default workspace.
    virtual Status set_workspace(BackendBlas h, uint64_t dptr, uint64_t bytes) = 0;
    virtual Status version(int* out) = 0;

    virtual Status level1(BackendBlas h, const vgpu_blas_level1& c, BlasResult* host_result) = 0;
    virtual Status level2(BackendBlas h, const vgpu_blas_level2& c) = 0;
    // `pointers` only for GEMM_POINTERS.
    virtual Status gemm(BackendBlas h, const vgpu_blas_gemm& c, const BlasPointers& pointers) = 0;
    virtual Status level3(BackendBlas h, const vgpu_blas_level3& c) = 0;
};

} // namespace kvmgpu::vgpu
