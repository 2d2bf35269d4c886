#include "tests/support/param_layout_cases.h"

#include <array>
#include <cstring>

namespace kvmgpu::vgpu::test {

void launch_must_match_layout(VgpuRig& rig, std::span<const uint8_t> fatbin) {
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    uint64_t fn = 0;
    rig.module_with("copy_wide", &fn, fatbin);
    ASSERT_NE(fn, 0u);
    const uint64_t out = rig.alloc(64);
    auto read_out = [&] {
        std::array<uint64_t, 8> got{};
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, out, 64, 0}}).status, VGPU_SUCCESS);
        rig.get(kDataGpa, got.data(), 64);
        return got;
    };
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {out, 0, 64, 0}}).status, VGPU_SUCCESS);

    // Buffers that are not the kernel's 72 bytes. The 64-byte struct given
    // as 8 bytes: before the fix the driver read 56 bytes of VMM or worker
    // memory past the guest's 8 into the kernel.
    const std::vector<std::vector<uint8_t>> short_struct{bytes(uint64_t{0x1111}), bytes(out)};
    EXPECT_EQ(rig.launch(fn, short_struct, 1, 1, 8, 1).status, VGPU_ERROR_INVALID_VALUE);
    // One parameter where the kernel has two: this crashed the worker.
    std::array<uint64_t, 8> wide;
    for (size_t i = 0; i < wide.size(); ++i) wide[i] = 0xA5A5000000000000ull | i;
    const std::vector<std::vector<uint8_t>> one_param{bytes(wide)};
    EXPECT_EQ(rig.launch(fn, one_param, 1, 1, 8, 1).status, VGPU_ERROR_INVALID_VALUE);
    // Three where it has two.
    const std::vector<std::vector<uint8_t>> extra{bytes(wide), bytes(out), bytes(out)};
    EXPECT_EQ(rig.launch(fn, extra, 1, 1, 8, 1).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(read_out(), (std::array<uint64_t, 8>{})) << "a refused launch ran";

    // The exact layout runs, and the kernel sees exactly the guest's bytes.
    const std::vector<std::vector<uint8_t>> exact{bytes(wide), bytes(out)};
    ASSERT_EQ(rig.launch(fn, exact, 1, 1, 8, 1).status, VGPU_SUCCESS);
    EXPECT_EQ(read_out(), wide);
}

} // namespace kvmgpu::vgpu::test
