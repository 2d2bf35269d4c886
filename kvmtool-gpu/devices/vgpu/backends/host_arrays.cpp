#include "kvmtool-gpu/devices/vgpu/backends/host_arrays.h"

namespace kvmgpu::vgpu {

Status HostArrays::array_create(const ArrayShape& shape, BackendArray* out) {
    const uint64_t bytes = shape.bytes(); // checked by check_array_shape: no overflow
    if (!memory_.take(bytes)) return VGPU_ERROR_OUT_OF_MEMORY;
    auto* host = static_cast<uint8_t*>(std::calloc(1, bytes));
    if (!host) {
        memory_.give(bytes);
        return VGPU_ERROR_OUT_OF_MEMORY;
    }
    const BackendArray a = memory_.next_object();
    arrays_.emplace(a, HostArray{shape, std::unique_ptr<uint8_t, FreeBytes>(host)});
    *out = a;
    return VGPU_SUCCESS;
}

Status HostArrays::array_destroy(BackendArray a) {
    const auto it = arrays_.find(a);
    if (it == arrays_.end()) return VGPU_ERROR_INVALID_HANDLE;
    memory_.give(it->second.shape.bytes());
    arrays_.erase(it);
    return VGPU_SUCCESS;
}

uint8_t* HostArrays::bytes_of(BackendArray a, const ArrayShape** shape) const {
    const auto it = arrays_.find(a);
    if (it == arrays_.end()) return nullptr;
    *shape = &it->second.shape;
    return it->second.bytes.get();
}

Status HostArrays::sampled_object_create(const TextureSpec& spec, bool surface, uint64_t* out) {
    if (spec.resource.type == 0 && !arrays_.count(spec.resource.handle)) return VGPU_ERROR_INVALID_HANDLE;
    if (surface && (spec.resource.type != 0 || !(arrays_.at(spec.resource.handle).shape.flags & kArrayFlagSurface)))
        return VGPU_ERROR_INVALID_VALUE; // as the driver: a surface needs an array made for load/store
    const uint64_t object = memory_.next_object();
    sampled_objects_.emplace(object, surface);
    *out = object;
    return VGPU_SUCCESS;
}

Status HostArrays::sampled_object_destroy(uint64_t object, bool surface) {
    const auto it = sampled_objects_.find(object);
    if (it == sampled_objects_.end() || it->second != surface) return VGPU_ERROR_INVALID_VALUE;
    sampled_objects_.erase(it);
    return VGPU_SUCCESS;
}

void HostArrays::clear() {
    arrays_.clear();
    sampled_objects_.clear();
}

} // namespace kvmgpu::vgpu
