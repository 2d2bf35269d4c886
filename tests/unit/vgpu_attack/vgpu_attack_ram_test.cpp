// Guest RAM with a hole: two regions, [0, 4 MiB) and [8 MiB, 12 MiB). Rings,
// copies, scatter-gather entries and zero-copy windows that reach into the
// hole, straddle it, or run off the end are refused; each region on its own
// works. The device is driven through raw register writes and a ring this
// file writes itself (the rig knows only one region).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_device.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::vgpu {
namespace {

constexpr uint64_t kLowEnd = 4 << 20;   // region 1: [0, 4 MiB)
constexpr uint64_t kHighBase = 8 << 20; // region 2: [8 MiB, 12 MiB)
constexpr uint64_t kHighEnd = 12 << 20;
constexpr uint32_t kEntries = 16;

struct Result {
    uint32_t status = 0xFFFFFFFF;
    uint64_t r0 = 0;
};

class HoleyVm {
public:
    HoleyVm() {
        mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kLowEnd));
        mem.add_region(memmap::GuestPhysAddr{kHighBase},
                       memmap::Backing::create(memmap::PageSize::k4K, kHighEnd - kHighBase));
        dev = std::make_unique<VgpuDevice>(mem, make_host_backend(), VgpuOptions{});
        dev->start();
    }
    ~HoleyVm() { dev->stop(); }

    void reg32(uint64_t off, uint32_t v) { dev->write(off, {reinterpret_cast<const uint8_t*>(&v), 4}); }
    void reg64(uint64_t off, uint64_t v) { dev->write(off, {reinterpret_cast<const uint8_t*>(&v), 8}); }
    uint32_t read32(uint64_t off) {
        uint32_t v = 0;
        dev->read(off, {reinterpret_cast<uint8_t*>(&v), 4});
        return v;
    }
    uint8_t* host(uint64_t gpa, uint64_t len = 1) { return mem.translate(memmap::GuestPhysAddr{gpa}, len)->data(); }

    // RESET, then ENABLE a ring at gpa; returns VGPU_REG_ERROR.
    uint32_t enable(uint64_t gpa) {
        reg32(VGPU_REG_CONTROL, VGPU_CONTROL_RESET);
        if (auto span = mem.translate(memmap::GuestPhysAddr{gpa}, vgpu_ring_bytes(kEntries)))
            std::memset(span->data(), 0, span->size());
        reg64(VGPU_REG_RING_GPA, gpa);
        reg32(VGPU_REG_RING_SIZE, kEntries);
        reg32(VGPU_REG_CONTROL, VGPU_CONTROL_ENABLE);
        ring_ = gpa, producer_ = 0;
        return read32(VGPU_REG_ERROR);
    }

    Result call(uint16_t op, std::vector<uint64_t> args) {
        uint8_t* ring = host(ring_, vgpu_ring_bytes(kEntries));
        const uint32_t slot = producer_ % kEntries;
        vgpu_command c{};
        c.opcode = op;
        c.seq = ++seq_;
        for (size_t i = 0; i < args.size(); ++i) c.arg[i] = args[i];
        std::memcpy(ring + vgpu_command_offset(slot), &c, sizeof c);
        std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(ring)).store(++producer_, std::memory_order_release);
        reg32(VGPU_DOORBELL_OFFSET, producer_);
        auto& done = *reinterpret_cast<uint64_t*>(ring + vgpu_completion_offset(kEntries, slot));
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120); // a hang guard
        while (std::atomic_ref<uint64_t>(done).load(std::memory_order_acquire) != c.seq) {
            if (std::chrono::steady_clock::now() > deadline) {
                ADD_FAILURE() << "no completion for op " << op;
                return {};
            }
            std::this_thread::yield();
        }
        vgpu_completion out;
        std::memcpy(&out, &done, sizeof out);
        return {out.status, out.result[0]};
    }

    memmap::GuestMemory mem;
    std::unique_ptr<VgpuDevice> dev;

private:
    uint64_t ring_ = 0;
    uint32_t producer_ = 0;
    uint64_t seq_ = 0;
};

TEST(AttackHoleyRam, RingsInTheHoleAcrossItOrOffTheEnd) {
    HoleyVm vm;
    EXPECT_EQ(vm.enable(kLowEnd - 4096), VGPU_ERROR_INVALID_VALUE);   // runs into the hole
    EXPECT_EQ(vm.enable(kLowEnd + (1 << 20)), VGPU_ERROR_INVALID_VALUE); // in the hole
    EXPECT_EQ(vm.enable(kHighBase - 4096), VGPU_ERROR_INVALID_VALUE); // starts in the hole
    EXPECT_EQ(vm.enable(kHighEnd - 4096), VGPU_ERROR_INVALID_VALUE);  // runs off the end
    EXPECT_EQ(vm.read32(VGPU_REG_STATUS), 0u);
    ASSERT_EQ(vm.enable(kHighBase), VGPU_SUCCESS); // wholly in region 2
    EXPECT_EQ(vm.call(VGPU_OP_NOP, {}).status, VGPU_SUCCESS);
    ASSERT_EQ(vm.enable(0x100000), VGPU_SUCCESS); // and in region 1
    EXPECT_EQ(vm.call(VGPU_OP_NOP, {}).status, VGPU_SUCCESS);
}

TEST(AttackHoleyRam, CopiesAndListsThatTouchTheHole) {
    HoleyVm vm;
    ASSERT_EQ(vm.enable(0x100000), VGPU_SUCCESS);
    const Result d = vm.call(VGPU_OP_MEM_ALLOC, {1 << 20});
    ASSERT_EQ(d.status, VGPU_SUCCESS);
    auto htod = [&](uint64_t gpa, uint64_t n) { return vm.call(VGPU_OP_MEMCPY_HTOD, {d.r0, gpa, n, 0}).status; };
    EXPECT_EQ(htod(kLowEnd - 16, 32), VGPU_ERROR_INVALID_VALUE);  // straddles into the hole
    EXPECT_EQ(htod(kLowEnd, 16), VGPU_ERROR_INVALID_VALUE);       // in the hole
    EXPECT_EQ(htod(kHighBase - 8, 16), VGPU_ERROR_INVALID_VALUE); // from the hole into region 2
    EXPECT_EQ(htod(kLowEnd - 16, kHighBase - kLowEnd + 32), VGPU_ERROR_INVALID_VALUE); // across it
    EXPECT_EQ(htod(kLowEnd - 16, 16), VGPU_SUCCESS);
    EXPECT_EQ(htod(kHighBase, 16), VGPU_SUCCESS);

    // One list, one entry in each region: fine, and the bytes arrive in order.
    std::memset(vm.host(kLowEnd - 8, 8), 0x11, 8);
    std::memset(vm.host(kHighBase, 8), 0x22, 8);
    const uint64_t list = 0x200000;
    const vgpu_sg_entry both[] = {{kLowEnd - 8, 8}, {kHighBase, 8}};
    std::memcpy(vm.host(list, sizeof both), both, sizeof both);
    for (uint64_t how = 0; how < VGPU_SG_STRATEGY_COUNT_; ++how)
        EXPECT_EQ(vm.call(VGPU_OP_MEMCPY_HTOD_SG, {d.r0, list, 2, 0, how, 16}).status, VGPU_SUCCESS) << how;
    ASSERT_EQ(vm.call(VGPU_OP_MEMCPY_DTOH, {0x300000, d.r0, 16, 0}).status, VGPU_SUCCESS);
    const uint8_t want[16] = {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
                              0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22};
    EXPECT_EQ(std::memcmp(vm.host(0x300000, 16), want, 16), 0);
    // An entry across the hole, and a list that itself straddles into it.
    const vgpu_sg_entry across{kLowEnd - 8, kHighBase - kLowEnd + 16};
    std::memcpy(vm.host(list, sizeof across), &across, sizeof across);
    EXPECT_EQ(vm.call(VGPU_OP_MEMCPY_DTOH_SG, {d.r0, list, 1, 0, VGPU_SG_COALESCE}).status, VGPU_ERROR_INVALID_VALUE);
    // (The list's last 8 bytes are also the first entry's target: the
    // device read the list before it writes anything.)
    std::memcpy(vm.host(kLowEnd - 32, sizeof both), both, sizeof both);
    EXPECT_EQ(vm.call(VGPU_OP_MEMCPY_DTOH_SG, {d.r0, kLowEnd - 32, 2, 0, 0}).status, VGPU_SUCCESS);
    std::memcpy(vm.host(kLowEnd - 32, sizeof both), both, sizeof both);
    EXPECT_EQ(vm.call(VGPU_OP_MEMCPY_DTOH_SG, {d.r0, kLowEnd - 32, 3, 0, 0}).status, VGPU_ERROR_INVALID_VALUE);

    // Zero-copy windows end where their region ends.
    const Result w1 = vm.call(VGPU_OP_GUEST_RAM_DEVICE_PTR, {kLowEnd - 16, 16});
    const Result w2 = vm.call(VGPU_OP_GUEST_RAM_DEVICE_PTR, {kHighBase, 16});
    ASSERT_EQ(w1.status, VGPU_SUCCESS);
    ASSERT_EQ(w2.status, VGPU_SUCCESS);
    EXPECT_EQ(vm.call(VGPU_OP_GUEST_RAM_DEVICE_PTR, {kLowEnd - 16, 32}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(vm.call(VGPU_OP_MEMCPY_DTOD, {d.r0, w1.r0, 32, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(vm.call(VGPU_OP_MEMCPY_DTOD, {d.r0, w2.r0 - 8, 16, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(vm.call(VGPU_OP_MEMCPY_DTOD, {d.r0, w1.r0, 16, 0}).status, VGPU_SUCCESS);
    EXPECT_EQ(vm.call(VGPU_OP_MEMCPY_DTOD, {w2.r0, d.r0, 16, 0}).status, VGPU_SUCCESS);
    EXPECT_EQ(vm.call(VGPU_OP_NOP, {}).status, VGPU_SUCCESS);
}

} // namespace
} // namespace kvmgpu::vgpu
