// Parameter sizes of the kernels in kernels/*.cu, by name. The real CUDA
// driver reads these from the module's metadata; the guest cannot, so
// cuModuleGetFunction looks the name up here and cuLaunchKernel uses the
// sizes. Add a line beside every new kernel (or use vgpuLaunchKernel /
// vgpuFuncSetParamSizes).
#pragma once

#include <stdint.h>

#include "kvmtool-gpu/abi/vgpu_abi.h"

namespace guest {

struct KernelSignature {
    const char* name;
    uint8_t nparams;
    uint16_t sizes[VGPU_MAX_KERNEL_PARAMS];
};

inline constexpr KernelSignature kKernelSignatures[] = {
    // vector_add(const float* a, const float* b, float* c, unsigned n)
    {"vector_add", 4, {8, 8, 8, 4}},
    // matmul(const float* a, const float* b, float* c, unsigned n)
    {"matmul", 4, {8, 8, 8, 4}},
    // empty_kernel()
    {"empty_kernel", 0, {}},
};

} // namespace guest
