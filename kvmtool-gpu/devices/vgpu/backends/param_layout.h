// A kernel's parameter layout as the module defines it: how many parameters,
// and each one's offset and size in the driver's parameter buffer. The
// device model checks every launch against it, so the driver is never handed
// a pointer to bytes the guest did not supply (it reads each parameter's
// real size from the module, whatever the guest declared). Made once per
// function, when the guest looks it up; also what marshalling a
// cuLaunchKernel `extra` buffer or runtime-style void** arguments needs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kvmgpu::vgpu {

struct ParamLayout {
    std::vector<uint32_t> offsets;
    std::vector<uint32_t> sizes;

    uint32_t count() const { return static_cast<uint32_t>(sizes.size()); }
    // Bytes from the buffer's start to the furthest parameter's end, in
    // whatever order the offsets come.
    uint64_t total_bytes() const;
    // "" when offsets and sizes pair up and no two parameters overlap; else
    // why not, one line. A backend refuses a function whose layout is not.
    std::string malformed() const;
    // Offsets at each size's natural alignment (power of two, at most 8),
    // as the C ABI lays out scalars and pointers: for kernels whose layout
    // is known by other means (the host backend's reference kernels).
    static ParamLayout natural(std::span<const uint16_t> sizes);
};

} // namespace kvmgpu::vgpu
