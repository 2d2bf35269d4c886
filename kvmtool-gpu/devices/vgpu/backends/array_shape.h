// What an array is once the device model has checked the guest's
// vgpu_array_desc: a format the vGPU offers, a shape whose byte count fits
// in 64 bits, and the element size every copy and texture is checked with.
// Shared by the device model (checks, quota) and the backends (the host
// backend lays arrays out by it; the CUDA backend hands it to the driver).
#pragma once

#include <cstdint>

#include "kvmtool-gpu/abi/vgpu_abi.h"

namespace kvmgpu::vgpu {

struct ArrayShape {
    uint64_t width = 0, height = 0, depth = 0; // as CUDA_ARRAY3D_DESCRIPTOR has them (0: no such dimension)
    uint32_t format = 0, channels = 0, flags = 0;
    uint32_t element_bytes = 0; // one element, every channel

    uint64_t row_bytes() const { return width * element_bytes; }
    uint64_t rows() const { return height ? height : 1; }
    uint64_t slices() const { return depth ? depth : 1; } // layers or depth
    uint64_t bytes() const { return row_bytes() * rows() * slices(); }
    vgpu_array_desc desc() const { return vgpu_array_desc{width, height, depth, format, channels, flags, 0}; }
};

// The CUDA_ARRAY3D_* flags offered: LAYERED, SURFACE_LDST, CUBEMAP, TEXTURE_GATHER.
constexpr uint32_t kArrayFlagLayered = 0x01, kArrayFlagSurface = 0x02, kArrayFlagCubemap = 0x04,
                   kArrayFlagGather = 0x08;
// Each dimension's bound (a GPU's are lower: its driver refuses more).
constexpr uint64_t kMaxArrayDimension = 1u << 20;

// Bytes of one channel of a CUarray_format the vGPU offers (the integer,
// half and float ones); 0 for any other.
uint32_t format_channel_bytes(uint32_t format);

// nullptr and *out filled when `d` is an array the vGPU makes; else why not.
// *not_supported tells a valid CUDA shape the vGPU does not offer (another
// format, a flag such as SPARSE) from an invalid one.
const char* check_array_shape(const vgpu_array_desc& d, ArrayShape* out, bool* not_supported);

} // namespace kvmgpu::vgpu
