// The smallest module image the host backend accepts (it checks images as
// the driver refuses them at once, module_image.h): PTX text. Its code is
// never run there; the reference kernels are found by name.
#pragma once

#include <cstddef>

namespace kvmgpu::vgpu::test {

inline constexpr char kHostModulePtx[] = ".version 8.0\n.target sm_90\n";
inline constexpr size_t kHostModulePtxBytes = sizeof kHostModulePtx - 1;

} // namespace kvmgpu::vgpu::test
