// What the guest cuBLAS's files share. Every entry point in this folder is
// cuBLAS's function of the same name, declared by NVIDIA's cublas_v2.h (so
// its signature is checked against NVIDIA's); each call is checked here by
// the same rules the VMM applies (blas_checks.h: a wrong dimension is
// refused at the call, as cuBLAS refuses it) and then sent as one vGPU
// command (vgpu_blas_abi.h). Calls that return nothing to host memory are
// queued (their errors come at the next synchronization, as a kernel's
// do); the others wait for their answer.
#pragma once

#include <cublas_v2.h>

#include "kvmtool-gpu/abi/vgpu_blas_abi.h"
#include "kvmtool-gpu/abi/blas_checks.h"

// The guest's side of a cublasHandle_t (opaque in cublas_v2.h).
struct cublasContext {
    uint64_t vgpu = 0; // the VMM's handle
    cudaStream_t stream = nullptr;
    cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
    cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
};

namespace guest::cublas {

using kvmgpu::vgpu::BlasPlan;

// The cuBLAS status for a vGPU status (a CUresult).
cublasStatus_t status_of(uint32_t vgpu_status);

// The call's head; `flags` from the handle's pointer mode.
vgpu_blas_head head_of(cublasHandle_t h, uint32_t routine);

// A scalar argument: its value (host pointer mode, `bytes` of it) or its
// device address (device pointer mode).
vgpu_blas_scalar scalar_of(cublasHandle_t h, const void* value, size_t bytes);

// Sends a call the checks passed (plan.why unset, else its status). With
// `result` (host pointer mode results) it waits and copies `result_bytes`
// of the answer there; else the call is queued.
cublasStatus_t submit(uint16_t opcode, const void* call, uint32_t bytes, const BlasPlan& plan, void* result = nullptr,
                      uint32_t result_bytes = 0);

template <class Call>
cublasStatus_t submit(uint16_t opcode, const Call& call, const BlasPlan& plan, void* result = nullptr,
                      uint32_t result_bytes = 0)
{
    return submit(opcode, &call, sizeof call, plan, result, result_bytes);
}

inline uint64_t dev(const void* p) { return reinterpret_cast<uintptr_t>(p); }

} // namespace guest::cublas
