// CUresult -> vgpu_status, and the early-return helper the CUDA backend's
// files share. Internal to backends/.
#pragma once

#include <cuda.h>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

// vgpu_status spans 0..1023; a CUresult beyond that travels as UNKNOWN.
inline Status to_status(CUresult r) { return r <= 1023 ? static_cast<Status>(r) : VGPU_ERROR_UNKNOWN; }

} // namespace kvmgpu::vgpu

// Returns the call's status from the enclosing function unless it succeeded.
#define CU_TRY(expr)                                                 \
    do {                                                             \
        const CUresult cu_try_r_ = (expr);                           \
        if (cu_try_r_ != CUDA_SUCCESS) return ::kvmgpu::vgpu::to_status(cu_try_r_); \
    } while (0)
