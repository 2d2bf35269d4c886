// Launches against a kernel's real parameter layout, on a vGPU whose backend
// runs gpu_test_kernels.cu (CUDA in-process or in a worker): a launch that
// declares fewer bytes or fewer parameters than the module says is refused
// before the driver sees it, and the kernel never runs.
#pragma once

#include <span>

#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {

void launch_must_match_layout(VgpuRig& rig, std::span<const uint8_t> fatbin);

} // namespace kvmgpu::vgpu::test
