// A 2-D or 3-D copy cut into boxes whose host sides each lie in one host
// registration. The driver refuses a 2-D or 3-D copy whose host rows run
// from one registration into another (INVALID_VALUE), and guest RAM is
// registered in pieces as copies reach it (lazy_registration.h), so a
// pitched copy of a large guest buffer often spans two. Whole slices and
// runs of rows go as one box; a row cut by a boundary goes as two or more.
// Backend-independent: the caller says where a piece ends and runs each box.
#pragma once

#include <cstdint>
#include <functional>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

// Bytes from `host` to the end of the registration holding it, at most
// `left` (`left` where no registration limits it).
using PieceBytes = std::function<uint64_t(const uint8_t* host, uint64_t left)>;

// Calls `run` for each box of `copy` in order (z, then y, then x), each a
// Copy3D of its own: host and device sides' pointers moved to the box,
// arrays' offsets moved. Stops at the first box `run` answers non-zero and
// returns that; 0 when every box ran.
int for_each_registered_box(const Copy3D& copy, const PieceBytes& piece_bytes,
                            const std::function<int(const Copy3D& box)>& run);

} // namespace kvmgpu::vgpu
