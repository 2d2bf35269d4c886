#include "kvmtool-gpu/devices/vgpu/backends/copy_boxes.h"

#include <algorithm>

namespace kvmgpu::vgpu {

namespace {

bool linear(const CopySide& s) { return s.kind == VGPU_COPY_HOST || s.kind == VGPU_COPY_DEVICE; }

// The side moved to the box whose first byte is (x, y, z) of the copy.
CopySide moved(const CopySide& s, uint64_t x, uint64_t y, uint64_t z) {
    CopySide out = s;
    if (linear(s)) {
        const uint64_t at = z * s.pitch * s.height + y * s.pitch + x;
        if (s.kind == VGPU_COPY_HOST) out.host = s.host + at;
        else out.dptr = s.dptr + at;
    } else {
        out.x_bytes += x, out.y += y, out.z += z;
    }
    return out;
}

// How many whole units (rows or slices) of `unit_stride` bytes, each
// reaching `unit_bytes` from its start, fit in `avail` bytes; 1 when the
// stride is 0 (then one unit is all a box may hold).
uint64_t units_that_fit(uint64_t avail, uint64_t unit_bytes, uint64_t unit_stride, uint64_t most) {
    if (avail < unit_bytes) return 0;
    if (unit_stride == 0) return 1;
    return std::min(most, 1 + (avail - unit_bytes) / unit_stride);
}

} // namespace

int for_each_registered_box(const Copy3D& copy, const PieceBytes& piece_bytes,
                            const std::function<int(const Copy3D& box)>& run) {
    const CopySide* hosts[2];
    int n_hosts = 0;
    for (const CopySide* s : {&copy.src, &copy.dst})
        if (s->kind == VGPU_COPY_HOST) hosts[n_hosts++] = s;
    if (n_hosts == 0) return run(copy);
    const uint64_t w = copy.width_bytes, h = copy.height, d = copy.depth;
    auto box = [&](uint64_t x, uint64_t y, uint64_t z, uint64_t bw, uint64_t bh, uint64_t bd) {
        Copy3D b = copy;
        b.src = moved(copy.src, x, y, z);
        b.dst = moved(copy.dst, x, y, z);
        b.width_bytes = bw, b.height = bh, b.depth = bd;
        return run(b);
    };
    auto host_at = [](const CopySide& s, uint64_t x, uint64_t y, uint64_t z) {
        return s.host + z * s.pitch * s.height + y * s.pitch + x;
    };
    for (uint64_t z = 0; z < d;) {
        for (uint64_t y = 0; y < h;) {
            // Rows from y that every host side holds in one piece, then,
            // from a slice's first row, whole slices.
            uint64_t rows = h - y, slices = d - z;
            for (int i = 0; i < n_hosts; ++i) {
                const CopySide& s = *hosts[i];
                const uint64_t avail = piece_bytes(host_at(s, 0, y, z), UINT64_MAX);
                rows = std::min(rows, units_that_fit(avail, w, s.pitch, h - y));
                if (y == 0 && rows == h) {
                    const uint64_t slice_reach = (h - 1) * s.pitch + w;
                    slices = std::min(slices, units_that_fit(avail, slice_reach, s.pitch * s.height, d - z));
                } else {
                    slices = 1;
                }
            }
            if (rows == 0) { // the row itself crosses a boundary: cut it
                for (uint64_t x = 0; x < w;) {
                    uint64_t len = w - x;
                    for (int i = 0; i < n_hosts; ++i) len = std::min(len, piece_bytes(host_at(*hosts[i], x, y, z), len));
                    len = std::max<uint64_t>(len, 1);
                    if (const int r = box(x, y, z, len, 1, 1)) return r;
                    x += len;
                }
                ++y;
                continue;
            }
            if (y == 0 && rows == h && slices > 1) {
                if (const int r = box(0, 0, z, w, h, slices)) return r;
                z += slices - 1; // the slice loop's ++z moves past the last
                break;
            }
            if (const int r = box(0, y, z, w, rows, 1)) return r;
            y += rows;
        }
        ++z;
    }
    return 0;
}

} // namespace kvmgpu::vgpu
