// CUDA arrays and the texture and surface objects a kernel reads them
// through, as the device model asks a backend for them
// (GpuBackend::arrays(); null: not offered). Every shape and resource is
// already checked. Copies into and out of arrays are GpuBackend::memcpy_3d's.
#pragma once

#include <cstdint>

#include "kvmtool-gpu/devices/vgpu/backends/array_shape.h"
#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

class ArrayBackend {
public:
    virtual ~ArrayBackend() = default;

    virtual Status array_create(const ArrayShape& shape, BackendArray* out) = 0;
    virtual Status array_destroy(BackendArray a) = 0;
    // A texture (surface false) or surface object: the driver's value,
    // which kernels read as a parameter. A surface is cuSurfObjectCreate's
    // (an ARRAY resource; `spec.texture` unused).
    virtual Status sampled_object_create(const TextureSpec& spec, bool surface, uint64_t* out) = 0;
    virtual Status sampled_object_destroy(uint64_t object, bool surface) = 0;
};

} // namespace kvmgpu::vgpu
