// The GPU tests' kernels (tests/unit/vgpu/gpu_test_kernels.cu), embedded in
// each GPU test binary by kvmgpu_embed_file, and the check that a test
// process kept libcuda out (the worker-process tests).
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" const unsigned char vgpu_test_kernels_fatbin[];
extern "C" const unsigned char vgpu_test_kernels_fatbin_end[];

namespace kvmgpu::vgpu::test {

inline std::span<const uint8_t> test_fatbin() {
    return {vgpu_test_kernels_fatbin, static_cast<size_t>(vgpu_test_kernels_fatbin_end - vgpu_test_kernels_fatbin)};
}

inline bool libcuda_in_this_process() {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != nullptr;
}

} // namespace kvmgpu::vgpu::test
