// vector_add through the ring, as a guest runs it: n floats a[i] = i and
// b[i] = k put in guest RAM, three new allocations, two copies in, one
// launch, the result copied out and checked. For the tests that need "later
// commands still work" after a fault, whatever the backend.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {

inline void expect_vector_add_through_ring(VgpuRig& rig, uint64_t fn, uint32_t n, float k) {
    std::vector<float> a(n), b(n, k), c(n);
    for (uint32_t i = 0; i < n; ++i) a[i] = static_cast<float>(i);
    const uint64_t size = uint64_t{n} * 4;
    const uint64_t da = rig.alloc(size), db = rig.alloc(size), dc = rig.alloc(size);
    rig.put(kDataGpa, a.data(), size);
    rig.put(kDataGpa + size, b.data(), size);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {da, kDataGpa, size, 0}}).status, VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {db, kDataGpa + size, size, 0}}).status, VGPU_SUCCESS);
    const std::vector<std::vector<uint8_t>> p{bytes(da), bytes(db), bytes(dc), bytes(n)};
    ASSERT_EQ(rig.launch(fn, p, (n + 255) / 256, 1, 256, 1).status, VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, dc, size, 0}}).status, VGPU_SUCCESS);
    rig.get(kDataGpa, c.data(), size);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], static_cast<float>(i) + k) << i;
}

} // namespace kvmgpu::vgpu::test
