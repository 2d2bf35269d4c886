// The 2-D memsets and the stream memory operations through the ring, over
// the host backend: what they write, and each way a guest can get them
// wrong (alignment, a pitch below its row, a span past the allocation or
// wrapping, a word outside this VM's memory, unknown flags).
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

struct VgpuMemops : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 2ull << 20, .max_handles = 64}};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }
    std::vector<uint8_t> read(uint64_t d, size_t n) {
        std::vector<uint8_t> out(n);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, n, 0}}).status, VGPU_SUCCESS);
        rig.get(kDataGpa, out.data(), n);
        return out;
    }
    uint32_t memset_2d(uint16_t op, uint64_t d, uint64_t pitch, uint64_t value, uint64_t width, uint64_t height,
                       uint64_t stream = 0) {
        return rig.call({.opcode = op, .args = {d, pitch, value, width, height, stream}}).status;
    }
    uint32_t value_op(uint16_t op, uint64_t d, uint64_t value, uint64_t flags, uint64_t bytes, uint64_t stream = 0) {
        return rig.call({.opcode = op, .args = {stream, d, value, flags, bytes}, .flags = VGPU_CMD_FLAG_ASYNC}).status;
    }
};

TEST_F(VgpuMemops, Memset2DWritesEachRowOnly) {
    const uint64_t d = rig.alloc(4096);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 0, 4096, 0}}).status, VGPU_SUCCESS);
    // 3 rows of 2 u32s, 16 bytes apart; 2 rows of 3 u16s at 64; 2 rows of 5 bytes at 128.
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D32, d, 16, 0x11223344, 2, 3), VGPU_SUCCESS);
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D16, d + 64, 8, 0xBEEF, 3, 2), VGPU_SUCCESS);
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D8, d + 128, 6, 0x7A, 5, 2), VGPU_SUCCESS);
    const auto out = read(d, 160);
    for (size_t i = 0; i < 48; ++i) {
        const bool in_row = i % 16 < 8;
        const uint8_t want = in_row ? static_cast<uint8_t>(0x11223344u >> (8 * (i % 4))) : 0;
        EXPECT_EQ(out[i], want) << "byte " << i;
    }
    for (size_t i = 64; i < 80; ++i) {
        const bool in_row = (i - 64) % 8 < 6;
        const uint8_t want = in_row ? ((i % 2) ? 0xBE : 0xEF) : 0;
        EXPECT_EQ(out[i], want) << "byte " << i;
    }
    for (size_t i = 128; i < 140; ++i) EXPECT_EQ(out[i], (i - 128) % 6 < 5 ? 0x7A : 0) << "byte " << i;
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D32, d, 16, 1, 0, 3), VGPU_SUCCESS); // nothing to set
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D32, d, 16, 1, 2, 0), VGPU_SUCCESS);
}

TEST_F(VgpuMemops, Memset2DRefusesWhatADriverWould) {
    const uint64_t d = rig.alloc(4096);
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D32, d + 2, 16, 1, 2, 2), VGPU_ERROR_INVALID_VALUE); // start
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D32, d, 18, 1, 2, 2), VGPU_ERROR_INVALID_VALUE);     // pitch
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D16, d, 4, 1, 3, 2), VGPU_ERROR_INVALID_VALUE);      // pitch < row
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D8, d, 1, 0x100, 1, 1), VGPU_ERROR_INVALID_VALUE);   // value
    // The last row would end past the allocation; rows would wrap the address space.
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D8, d, 1024, 1, 16, 4), VGPU_SUCCESS);
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D8, d, 1024, 1, 16, 5), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D8, d, 1ull << 62, 1, 1, 8), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D32, d, 1ull << 62, 1, 1ull << 62, 1), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D8, 0x1000, 16, 1, 1, 1), VGPU_ERROR_INVALID_VALUE); // not this VM's
    EXPECT_EQ(memset_2d(VGPU_OP_MEMSET_2D_D8, d, 16, 1, 1, 1, 999), VGPU_ERROR_INVALID_HANDLE); // stream
}

TEST_F(VgpuMemops, StreamValuesWriteAndWait) {
    const uint64_t d = rig.alloc(4096);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 0, 64, 0}}).status, VGPU_SUCCESS);
    const uint64_t s = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}}).r0;
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WRITE_VALUE, d, 0xCAFEF00Du, 0, 4, s), VGPU_SUCCESS);
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WRITE_VALUE, d + 8, 0x0102030405060708ull, 1, 8), VGPU_SUCCESS);
    const auto out = read(d, 16);
    const uint8_t want[16] = {0x0D, 0xF0, 0xFE, 0xCA, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1};
    EXPECT_EQ(0, std::memcmp(out.data(), want, 16));
    // Conditions met now pass (GEQ cyclic, EQ, AND, NOR); the host backend runs
    // streams at once, so one not met cannot be held: NOT_SUPPORTED.
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WAIT_VALUE, d, 0xCAFEF00Du, 0, 4, s), VGPU_SUCCESS);
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WAIT_VALUE, d, 0xCAFEF00Eu, 0, 4, s), VGPU_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WAIT_VALUE, d, 0xCAFEF00Du, 1, 4), VGPU_SUCCESS);
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WAIT_VALUE, d, 0x1, 2, 4), VGPU_SUCCESS);
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WAIT_VALUE, d, 0x2, 2, 4), VGPU_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WAIT_VALUE, d + 8, 0x0102030405060708ull, 1 | (1u << 30), 8), VGPU_SUCCESS);
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WAIT_VALUE, d + 4, 0, 3, 4), VGPU_SUCCESS); // ~(0 | 0) != 0
}

TEST_F(VgpuMemops, StreamValuesRefuseWhatTheyCannotReach) {
    const uint64_t d = rig.alloc(4096);
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WRITE_VALUE, d + 2, 1, 0, 4), VGPU_ERROR_INVALID_VALUE);    // alignment
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WRITE_VALUE, d + 4, 1, 0, 8), VGPU_ERROR_INVALID_VALUE);    // alignment
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WRITE_VALUE, d, 1, 0, 2), VGPU_ERROR_INVALID_VALUE);        // width
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WRITE_VALUE, d, 1ull << 32, 0, 4), VGPU_ERROR_INVALID_VALUE); // too wide
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WRITE_VALUE, d, 1, 2, 4), VGPU_ERROR_INVALID_VALUE);        // flags
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WAIT_VALUE, d, 1, 4, 4), VGPU_ERROR_INVALID_VALUE);         // flags
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WRITE_VALUE, d + 4096, 1, 0, 4), VGPU_ERROR_INVALID_VALUE); // past the end
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WRITE_VALUE, d + 4092, 1, 0, 8), VGPU_ERROR_INVALID_VALUE); // straddles it
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WAIT_VALUE, 0x1000, 1, 0, 4), VGPU_ERROR_INVALID_VALUE);    // not this VM's
    EXPECT_EQ(value_op(VGPU_OP_STREAM_WRITE_VALUE, d, 1, 0, 4, 12345), VGPU_ERROR_INVALID_HANDLE);
}

} // namespace
} // namespace kvmgpu::vgpu::test
