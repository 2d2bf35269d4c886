// What the driver accepts as a module image, checked by backends that have
// no driver to ask (the host backend): a fatbin whose header fits the
// image, a 64-bit ELF for CUDA (a cubin), or PTX text. The driver checks
// much more (the code itself); this refuses what it would refuse at once.
#pragma once

#include <cstdint>
#include <span>

namespace kvmgpu::vgpu {

enum class ModuleImageKind { Invalid, Fatbin, Cubin, Ptx };

ModuleImageKind module_image_kind(std::span<const uint8_t> image);

} // namespace kvmgpu::vgpu
