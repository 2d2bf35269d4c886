// The GPU tests' kernels (tests/unit/vgpu/gpu_test_kernels.cu), embedded in
// each GPU test binary by kvmgpu_embed_file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" const unsigned char vgpu_test_kernels_fatbin[];
extern "C" const unsigned char vgpu_test_kernels_fatbin_end[];

namespace kvmgpu::vgpu::test {

inline std::span<const uint8_t> test_fatbin() {
    return {vgpu_test_kernels_fatbin, static_cast<size_t>(vgpu_test_kernels_fatbin_end - vgpu_test_kernels_fatbin)};
}

} // namespace kvmgpu::vgpu::test
