// The register block, ENABLE validation, doorbell modes, the broken-ring
// path, RESET, and two VMs side by side.
#include <sys/eventfd.h>
#include <unistd.h>

#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/abi/platform_abi.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

TEST(VgpuRegisters, IdentifyTheDevice) {
    VgpuRig rig;
    EXPECT_EQ(rig.reg_read32(VGPU_REG_MAGIC), VGPU_MAGIC);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_VERSION), VGPU_ABI_VERSION);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_BACKEND), VGPU_BACKEND_HOST);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_DOORBELL_MODE), VGPU_DOORBELL_ADAPTIVE); // the default
    EXPECT_EQ(rig.reg_read32(VGPU_REG_MAX_RING), VGPU_DEFAULT_MAX_RING);
    const uint64_t f = rig.reg_read64(VGPU_REG_FEATURES);
    EXPECT_TRUE(f & VGPU_FEATURE_SCATTER_GATHER);
    EXPECT_TRUE(f & VGPU_FEATURE_ZERO_COPY); // the host backend maps guest RAM too
    EXPECT_FALSE(f & VGPU_FEATURE_REAL_KERNELS);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_STATUS), 0u);
    EXPECT_NE(rig.dev->backend_description().find("not a GPU"), std::string::npos);
    // Reads past the block are zeros, not garbage.
    EXPECT_EQ(rig.reg_read32(0x800), 0u);
}

TEST(VgpuRegisters, RingGpaWrittenInHalves) {
    VgpuRig rig;
    rig.reg_write32(VGPU_REG_RING_GPA, 0x89ABC000);
    rig.reg_write32(VGPU_REG_RING_GPA + 4, 0x1);
    EXPECT_EQ(rig.reg_read64(VGPU_REG_RING_GPA), 0x189ABC000ull);
    // A write straddling two registers is ignored.
    rig.reg_write64(VGPU_REG_RING_SIZE, ~0ull);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_RING_SIZE), 0u);
}

TEST(VgpuEnable, AcceptsAValidRing) {
    VgpuRig rig;
    EXPECT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_STATUS), VGPU_STATUS_ENABLED);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
}

TEST(VgpuEnable, RefusesMisalignedRing) {
    VgpuRig rig;
    EXPECT_EQ(rig.enable(kRingGpa + 64), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_STATUS), 0u);
}

TEST(VgpuEnable, RefusesBadSizes) {
    VgpuRig rig;
    EXPECT_EQ(rig.enable(kRingGpa, 12), VGPU_ERROR_INVALID_VALUE);  // not a power of two
    EXPECT_EQ(rig.enable(kRingGpa, 4), VGPU_ERROR_INVALID_VALUE);   // below VGPU_MIN_RING
    EXPECT_EQ(rig.enable(kRingGpa, 8192), VGPU_ERROR_INVALID_VALUE); // above MAX_RING
    EXPECT_EQ(rig.enable(kRingGpa, 0), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_STATUS), 0u);
}

TEST(VgpuEnable, RefusesRingOutsideRam) {
    VgpuRig rig;
    EXPECT_EQ(rig.enable(kRamBytes - 4096, 16), VGPU_ERROR_INVALID_VALUE); // runs off the end
    EXPECT_EQ(rig.enable(KVMGPU_VGPU_GPA, 16), VGPU_ERROR_INVALID_VALUE);  // not RAM at all
    EXPECT_EQ(rig.enable(~0ull & ~0xFFFull, 16), VGPU_ERROR_INVALID_VALUE); // wraps
    EXPECT_EQ(rig.reg_read32(VGPU_REG_STATUS), 0u);
}

TEST(VgpuEnable, SecondEnableAndUnknownControlBitsAreErrors) {
    VgpuRig rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    rig.reg_write32(VGPU_REG_CONTROL, VGPU_CONTROL_ENABLE);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_ERROR), VGPU_ERROR_INVALID_VALUE);
    rig.reg_write32(VGPU_REG_CONTROL, 0x80);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_ERROR), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_STATUS), VGPU_STATUS_ENABLED);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
}

TEST(VgpuRing, ManyCommandsWrapTheRingAndBatch) {
    VgpuRig rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    // Batches of a full ring, one doorbell each, three times round.
    for (int round = 0; round < 3; ++round) {
        std::vector<uint64_t> seqs;
        for (uint32_t i = 0; i < kRingEntries; ++i) seqs.push_back(rig.post({.opcode = VGPU_OP_INIT}));
        rig.doorbell();
        for (uint64_t s : seqs) {
            const Done d = rig.wait(s);
            EXPECT_EQ(d.status, VGPU_SUCCESS);
            EXPECT_EQ(d.r0, VGPU_BACKEND_HOST);
        }
    }
    EXPECT_EQ(rig.consumer(), 3 * kRingEntries);
    const auto c = rig.dev->counters();
    EXPECT_EQ(c.commands, 3 * kRingEntries);
    EXPECT_EQ(c.per_opcode[VGPU_OP_INIT], 3 * kRingEntries);
    EXPECT_GE(c.kicks, 3u);
    EXPECT_LE(c.max_pass, kRingEntries);
}

TEST(VgpuRing, ProducerTooFarAheadBreaksTheRingUntilReset) {
    VgpuRig rig;
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_NOP}).status, VGPU_SUCCESS);
    rig.set_producer(1 + kRingEntries + 1); // consumer is 1: N + 1 pending is impossible
    rig.doorbell();
    for (int i = 0; i < 1000 && rig.reg_read32(VGPU_REG_STATUS) != VGPU_STATUS_BROKEN; ++i) usleep(1000);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_STATUS), VGPU_STATUS_BROKEN);
    EXPECT_EQ(rig.consumer(), 1u); // nothing of the garbage ran
    // ENABLE is refused until RESET.
    rig.reg_write32(VGPU_REG_CONTROL, VGPU_CONTROL_ENABLE);
    EXPECT_EQ(rig.reg_read32(VGPU_REG_STATUS), VGPU_STATUS_BROKEN);
    rig.reset();
    EXPECT_EQ(rig.reg_read32(VGPU_REG_STATUS), 0u);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_INIT}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.dev->counters().broken, 1u);
}

TEST(VgpuRing, ResetDropsEveryHandleAndAllocation) {
    VgpuRig rig(VgpuOptions{.device_mem_quota = 1 << 20});
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const uint64_t d = rig.alloc(1 << 20);
    const Done s = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    ASSERT_EQ(s.status, VGPU_SUCCESS);
    rig.reset();
    EXPECT_EQ(rig.host->live_allocations(), 0u);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEM_FREE, .args = {d}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s.r0}}).status, VGPU_ERROR_INVALID_HANDLE);
    const Done info = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
    EXPECT_EQ(info.r0, 1u << 20); // the whole quota is free again
    rig.alloc(1 << 20);
}

TEST(VgpuDoorbell, PollModeNeedsNoDoorbell) {
    VgpuRig rig(VgpuOptions{.doorbell = DoorbellMode::Poll, .poll_spin_us = 10, .poll_sleep_us = 100});
    EXPECT_EQ(rig.reg_read32(VGPU_REG_DOORBELL_MODE), VGPU_DOORBELL_POLL);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    for (int i = 0; i < 5; ++i) {
        const uint64_t s = rig.post({.opcode = VGPU_OP_INIT});
        EXPECT_EQ(rig.wait(s).status, VGPU_SUCCESS);
        usleep(2000); // let the executor fall asleep between commands
    }
    EXPECT_EQ(rig.dev->counters().kicks, 0u);
}

TEST(VgpuDoorbell, IoeventfdModeWakesOnTheEventfd) {
    VgpuRig rig(VgpuOptions{.doorbell = DoorbellMode::Ioeventfd});
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const int fd = rig.dev->doorbell_eventfd();
    ASSERT_GE(fd, 0);
    for (int i = 0; i < 5; ++i) {
        const uint64_t s = rig.post({.opcode = VGPU_OP_INIT});
        const uint64_t one = 1; // what KVM does on the guest's doorbell write
        ASSERT_EQ(::write(fd, &one, sizeof one), 8);
        EXPECT_EQ(rig.wait(s).status, VGPU_SUCCESS);
    }
    EXPECT_EQ(rig.dev->counters().kicks, 0u);
}

TEST(VgpuDevice, StopThenEnableReportsNotInitialized) {
    VgpuRig rig;
    rig.dev->stop();
    EXPECT_EQ(rig.enable(), VGPU_ERROR_NOT_INITIALIZED);
}

TEST(VgpuOptionsCheck, BadOptionsThrow) {
    memmap::GuestMemory mem;
    EXPECT_THROW(VgpuDevice(mem, make_host_backend(), VgpuOptions{.max_ring = 100}), std::invalid_argument);
    EXPECT_THROW(VgpuDevice(mem, make_host_backend(), VgpuOptions{.max_handles = 0}), std::invalid_argument);
    EXPECT_THROW(VgpuDevice(mem, std::unique_ptr<GpuBackend>{}), std::invalid_argument);
    EXPECT_THROW(VgpuDevice(mem, std::unique_ptr<CommandEngine>{}), std::invalid_argument);
}

TEST(TwoVms, HandlesAndDevicePointersDoNotCross) {
    VgpuRig a, b;
    ASSERT_EQ(a.enable(), VGPU_SUCCESS);
    ASSERT_EQ(b.enable(), VGPU_SUCCESS);
    const uint64_t da = a.alloc(4096);
    const uint64_t db = b.alloc(4096);
    EXPECT_NE(da, db);
    const Done sa = a.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    const Done sb = b.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    ASSERT_EQ(sa.status, VGPU_SUCCESS);
    ASSERT_EQ(sb.status, VGPU_SUCCESS);
    EXPECT_NE(sa.r0, sb.r0); // same slot in both tables, still different numbers
    const Done ea = a.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});

    // B may not use A's device memory, streams, events or zero-copy addresses.
    EXPECT_EQ(b.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {da, kDataGpa, 16, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(b.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, da, 16, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(b.call({.opcode = VGPU_OP_MEM_FREE, .args = {da}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(b.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {sa.r0}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(b.call({.opcode = VGPU_OP_EVENT_RECORD, .args = {ea.r0, 0}}).status, VGPU_ERROR_INVALID_HANDLE);
    const Done zca = a.call({.opcode = VGPU_OP_GUEST_RAM_DEVICE_PTR, .args = {kDataGpa, 4096}});
    ASSERT_EQ(zca.status, VGPU_SUCCESS);
    EXPECT_EQ(b.call({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {db, zca.r0, 16, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    // ... while each still uses its own.
    EXPECT_EQ(a.call({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {da, zca.r0, 16, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(b.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {sb.r0}}).status, VGPU_SUCCESS);
}

} // namespace
} // namespace kvmgpu::vgpu::test
