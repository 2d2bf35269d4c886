// Commands of a VM running on a GPU server over UCX's loopback: the device
// model's results are the local ones, and guest RAM moves only by RMA.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "tests/support/ring_vector_add.h"
#include "tests/unit/remote/loopback_server.h"

namespace kvmgpu::remote::test {
namespace {

using vgpu::test::Cmd;
using vgpu::test::kDataGpa;
using vgpu::test::VgpuRig;
using RemoteLoopback = RemoteVm;

TEST_F(RemoteLoopback, VectorAddRunsOnTheServer) {
    VgpuRig& rig = *this->rig;
    EXPECT_EQ(rig.reg_read32(VGPU_REG_BACKEND), VGPU_BACKEND_HOST);
    uint64_t fn = 0;
    rig.module_with("vector_add", &fn);
    vgpu::test::expect_vector_add_through_ring(rig, fn, 5000, 0.5f);
    EXPECT_GE(stats().commands.load(), 8u);
}

TEST_F(RemoteLoopback, AsyncCopiesOutLandBeforeTheCommandCompletes) {
    VgpuRig& rig = *this->rig;
    const uint64_t bytes = (2 << 20) + 123; // three pieces each way, the last short
    const uint64_t d = rig.alloc(bytes);
    std::vector<uint8_t> in(bytes), out(bytes, 0);
    for (uint64_t i = 0; i < bytes; ++i) in[i] = static_cast<uint8_t>(i * 7 + 3);
    rig.put(kDataGpa, in.data(), bytes);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kDataGpa, bytes, 0}, .flags = VGPU_CMD_FLAG_ASYNC}).status,
              VGPU_SUCCESS);
    rig.put(kDataGpa + bytes, out.data(), bytes);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa + bytes, d, bytes, 0}, .flags = VGPU_CMD_FLAG_ASYNC})
                  .status,
              VGPU_SUCCESS);
    rig.get(kDataGpa + bytes, out.data(), bytes);
    EXPECT_EQ(in, out);
}

TEST_F(RemoteLoopback, ScatterGatherCopiesBothWays) {
    VgpuRig& rig = *this->rig;
    // Three pieces, the first two guest-contiguous, the third apart.
    const uint64_t piece = 8192, d = rig.alloc(3 * piece);
    const uint64_t at[3] = {kDataGpa, kDataGpa + piece, kDataGpa + 5 * piece};
    std::vector<uint8_t> src(3 * piece);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i % 251);
    for (int i = 0; i < 3; ++i) rig.put(at[i], src.data() + i * piece, piece);
    const uint64_t list = kDataGpa + 16 * piece;
    vgpu_sg_entry sg[3];
    for (int i = 0; i < 3; ++i) sg[i] = vgpu_sg_entry{at[i], piece};
    rig.put(list, sg, sizeof sg);
    for (uint32_t strategy : {uint32_t{VGPU_SG_AUTO}, uint32_t{VGPU_SG_PER_CHUNK}}) {
        ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d, list, 3, 0, strategy, 3 * piece}}).status,
                  VGPU_SUCCESS);
        std::vector<uint8_t> zero(3 * piece, 0), back(3 * piece);
        for (int i = 0; i < 3; ++i) rig.put(at[i], zero.data(), piece);
        ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH_SG, .args = {d, list, 3, 0, strategy, 3 * piece}}).status,
                  VGPU_SUCCESS);
        for (int i = 0; i < 3; ++i) rig.get(at[i], back.data() + i * piece, piece);
        EXPECT_EQ(back, src) << "strategy " << strategy;
    }
}

// Pageable guest memory on 4 KiB pages: one span per page, which travel
// many to a message (FETCH_LIST, DATA_LIST), with a large span among them
// that travels alone: the bytes come back in order both ways.
TEST_F(RemoteLoopback, ScatteredPagesTravelInListsBothWays) {
    VgpuRig& rig = *this->rig;
    constexpr uint64_t kPage = 4096, kSmall = 520, kLarge = 128 << 10; // three lists and a piece
    std::vector<vgpu_sg_entry> sg;
    for (uint64_t i = 0; i < kSmall; ++i) {
        if (i == kSmall / 2) sg.push_back(vgpu_sg_entry{kDataGpa + kSmall * 2 * kPage, kLarge});
        sg.push_back(vgpu_sg_entry{kDataGpa + i * 2 * kPage, kPage}); // every other page: no neighbours
    }
    const uint64_t total = kSmall * kPage + kLarge, d = rig.alloc(total);
    std::vector<uint8_t> src(total);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 13 + i / 4096);
    uint64_t at = 0;
    for (const vgpu_sg_entry& e : sg) {
        rig.put(e.gpa, src.data() + at, e.len);
        at += e.len;
    }
    const uint64_t list = kDataGpa + kSmall * 2 * kPage + kLarge + kPage;
    rig.put(list, sg.data(), sg.size() * sizeof(vgpu_sg_entry));
    const uint64_t n = sg.size();
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {d, list, n, 0, VGPU_SG_PER_CHUNK, total}}).status,
              VGPU_SUCCESS);
    std::vector<uint8_t> zero(kLarge, 0);
    for (const vgpu_sg_entry& e : sg) rig.put(e.gpa, zero.data(), e.len);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH_SG, .args = {d, list, n, 0, VGPU_SG_PER_CHUNK, total}}).status,
              VGPU_SUCCESS);
    std::vector<uint8_t> back(total);
    at = 0;
    for (const vgpu_sg_entry& e : sg) {
        rig.get(e.gpa, back.data() + at, e.len);
        at += e.len;
    }
    EXPECT_EQ(back, src);
}

// The trap doorbell: the ring is looked at only when kicked, so the 41
// commands below are all there at once (a polling executor could take them
// one by one).
struct RemoteBatches : RemoteVm {
    RemoteBatches() {
        options.doorbell = vgpu::DoorbellMode::Trap;
        ring_entries = 64;
    }
};

TEST_F(RemoteBatches, AsynchronousCommandsTravelInBatches) {
    VgpuRig& rig = *this->rig;
    const uint64_t d = rig.alloc(4 * 40);
    const uint64_t before = stats().batches.load();
    // 40 memsets, each one element further, then the copy back: one kick.
    for (uint32_t i = 0; i < 40; ++i)
        rig.post({.opcode = VGPU_OP_MEMSET_D32, .args = {d + 4 * i, i + 1, 1, 0}, .flags = VGPU_CMD_FLAG_ASYNC});
    const uint64_t last = rig.post({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, 4 * 40, 0}});
    rig.doorbell();
    ASSERT_EQ(rig.wait(last).status, VGPU_SUCCESS);
    std::vector<uint32_t> got(40);
    rig.get(kDataGpa, got.data(), 4 * 40);
    for (uint32_t i = 0; i < 40; ++i) EXPECT_EQ(got[i], i + 1) << i;
    EXPECT_EQ(stats().batches.load() - before, 1u);
}

TEST_F(RemoteLoopback, ResetFreesWhatTheVmHeldOnTheServer) {
    VgpuRig& rig = *this->rig;
    const uint64_t d = rig.alloc(4096);
    rig.reset();
    ASSERT_EQ(rig.enable(), 0u);
    // The handle died with RESET on the server.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_ERROR_INVALID_VALUE);
}

} // namespace
} // namespace kvmgpu::remote::test
