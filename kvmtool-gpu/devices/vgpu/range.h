// Overflow-safe range containment, used wherever a guest- or kernel-supplied
// address range is checked against something the VMM owns.
#pragma once

#include <cstdint>

namespace kvmgpu::vgpu {

// [start, start + len) inside [base, base + size)? Never overflows; len 0
// asks whether start itself lies inside.
inline bool range_inside(uint64_t start, uint64_t len, uint64_t base, uint64_t size) {
    if (start < base) return false;
    const uint64_t off = start - base;
    if (off >= size) return false;
    return len <= size - off;
}

// [a, a + a_len) and [b, b + b_len) share a byte; for ranges known not to wrap.
inline bool ranges_overlap(uint64_t a, uint64_t a_len, uint64_t b, uint64_t b_len) {
    return a < b + b_len && b < a + a_len;
}

} // namespace kvmgpu::vgpu
