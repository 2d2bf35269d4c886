// HostBackend: 2-D and 3-D copies between guest RAM, device memory and
// arrays (host_arrays.h), row by row.
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"

namespace kvmgpu::vgpu {

uint8_t* HostBackend::copy_view(const CopySide& side, const Copy3D& copy, uint64_t* pitch, uint64_t* slice) {
    if (side.kind == VGPU_COPY_ARRAY) {
        const ArrayShape* s = nullptr;
        uint8_t* bytes = arrays_.bytes_of(side.array, &s);
        if (!bytes) return nullptr;
        *pitch = s->row_bytes();
        *slice = s->row_bytes() * s->rows();
        return bytes + side.z * *slice + side.y * *pitch + side.x_bytes;
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

} // namespace kvmgpu::vgpu
