// HostBackend: arrays in host memory, 3-D copies between guest RAM, device
// memory and arrays, and texture and surface objects as bare numbers.
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"

namespace kvmgpu::vgpu {

Status HostBackend::array_create(const ArrayShape& shape, BackendArray* out) {
    const uint64_t bytes = shape.bytes(); // checked by check_array_shape: no overflow
    if (bytes > opts_.total_bytes - used_) return VGPU_ERROR_OUT_OF_MEMORY;
    auto* host = static_cast<uint8_t*>(std::calloc(1, bytes));
    if (!host) return VGPU_ERROR_OUT_OF_MEMORY;
    const BackendArray a = next_object();
    arrays_.emplace(a, HostArray{shape, std::unique_ptr<uint8_t, FreeBytes>(host)});
    used_ += bytes;
    *out = a;
    return VGPU_SUCCESS;
}

Status HostBackend::array_destroy(BackendArray a) {
    const auto it = arrays_.find(a);
    if (it == arrays_.end()) return VGPU_ERROR_INVALID_HANDLE;
    used_ -= it->second.shape.bytes();
    arrays_.erase(it);
    return VGPU_SUCCESS;
}

uint8_t* HostBackend::copy_view(const CopySide& side, const Copy3D& copy, uint64_t* pitch, uint64_t* slice) {
    if (side.kind == VGPU_COPY_ARRAY) {
        const auto it = arrays_.find(side.array);
        if (it == arrays_.end()) return nullptr;
        const ArrayShape& s = it->second.shape;
        *pitch = s.row_bytes();
        *slice = s.row_bytes() * s.rows();
        return it->second.bytes.get() + side.z * *slice + side.y * *pitch + side.x_bytes;
    }
    *pitch = side.pitch;
    *slice = side.pitch * side.height;
    if (side.kind == VGPU_COPY_HOST) return side.host;
    // The span the device model checked (vgpu_copy_span from the first byte).
    const uint64_t span = side.pitch * ((copy.height - 1) + side.height * (copy.depth - 1)) + copy.width_bytes;
    return translate(side.dptr, span);
}

Status HostBackend::memcpy_3d(const Copy3D& copy, BackendStream s, bool async) {
    (void)async; // this backend's streams are synchronous
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    uint64_t src_pitch = 0, src_slice = 0, dst_pitch = 0, dst_slice = 0;
    const uint8_t* src = copy_view(copy.src, copy, &src_pitch, &src_slice);
    uint8_t* dst = copy_view(copy.dst, copy, &dst_pitch, &dst_slice);
    if (!src || !dst) return VGPU_ERROR_INVALID_VALUE;
    for (uint64_t z = 0; z < copy.depth; ++z)
        for (uint64_t y = 0; y < copy.height; ++y)
            std::memmove(dst + z * dst_slice + y * dst_pitch, src + z * src_slice + y * src_pitch, copy.width_bytes);
    return VGPU_SUCCESS;
}

Status HostBackend::sampled_object_create(const TextureSpec& spec, bool surface, uint64_t* out) {
    if (spec.resource.type == 0 && !arrays_.count(spec.resource.handle)) return VGPU_ERROR_INVALID_HANDLE;
    if (surface && (spec.resource.type != 0 || !(arrays_.at(spec.resource.handle).shape.flags & kArrayFlagSurface)))
        return VGPU_ERROR_INVALID_VALUE; // as the driver: a surface needs an array made for load/store
    const uint64_t object = next_object();
    sampled_objects_.emplace(object, surface);
    *out = object;
    return VGPU_SUCCESS;
}

Status HostBackend::sampled_object_destroy(uint64_t object, bool surface) {
    const auto it = sampled_objects_.find(object);
    if (it == sampled_objects_.end() || it->second != surface) return VGPU_ERROR_INVALID_VALUE;
    sampled_objects_.erase(it);
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
