#include "kvmtool-gpu/devices/vgpu/backends/array_shape.h"

namespace kvmgpu::vgpu {

uint32_t format_channel_bytes(uint32_t format) {
    switch (format) {
    case 0x01: case 0x08: return 1;            // UNSIGNED_INT8, SIGNED_INT8
    case 0x02: case 0x09: case 0x10: return 2; // UNSIGNED_INT16, SIGNED_INT16, HALF
    case 0x03: case 0x0a: case 0x20: return 4; // UNSIGNED_INT32, SIGNED_INT32, FLOAT
    default: return 0;
    }
}

const char* check_array_shape(const vgpu_array_desc& d, ArrayShape* out, bool* not_supported) {
    *not_supported = false;
    const uint32_t channel = format_channel_bytes(d.format);
    if (channel == 0 || d.flags & ~(kArrayFlagLayered | kArrayFlagSurface | kArrayFlagCubemap | kArrayFlagGather)) {
        *not_supported = true;
        return "array format or flags not offered";
    }
    if (d.channels != 1 && d.channels != 2 && d.channels != 4) return "channels not 1, 2 or 4";
    if (d.reserved != 0) return "reserved field not 0";
    if (d.width == 0) return "zero width";
    if (d.width > kMaxArrayDimension || d.height > kMaxArrayDimension || d.depth > kMaxArrayDimension)
        return "a dimension past the vGPU's bound";
    const bool layered = d.flags & kArrayFlagLayered;
    if (d.height == 0 && d.depth != 0 && !layered) return "depth without height (only a layered 1-D array has that)";
    if (d.flags & kArrayFlagCubemap) {
        // Six faces (six per layer when layered), square.
        if (d.width != d.height || d.depth == 0 || (layered ? d.depth % 6 != 0 : d.depth != 6))
            return "a cubemap is square with six faces (per layer)";
    }
    ArrayShape s{d.width, d.height, d.depth, d.format, d.channels, d.flags, channel * d.channels};
    // 2^20 cubed times 16 bytes would not fit in 64 bits: the product is checked.
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(s.row_bytes(), s.rows(), &bytes) || __builtin_mul_overflow(bytes, s.slices(), &bytes))
        return "array bytes overflow";
    *out = s;
    return nullptr;
}

} // namespace kvmgpu::vgpu
