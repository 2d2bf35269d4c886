// The device model's small parts on their own: handle table, allocation
// table, run cursor, and the host backend used directly.
#include <gtest/gtest.h>

#include <numeric>

#include "kvmtool-gpu/devices/vgpu/allocation_table.h"
#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/run_cursor.h"
#include "kvmtool-gpu/devices/vgpu/handle_table.h"

namespace kvmgpu::vgpu {
namespace {

TEST(HandleTable, IssuesRefusesStaleAndForeignHandles) {
    HandleTable<int> t(HandleKind::Stream, 2, 7);
    const auto a = t.insert(10), b = t.insert(20);
    ASSERT_TRUE(a && b);
    EXPECT_FALSE(t.insert(30)); // full
    EXPECT_EQ(*t.find(*a), 10);
    EXPECT_EQ(t.find(0), nullptr);
    EXPECT_EQ(t.find(*a + 2), nullptr);             // never issued slot
    EXPECT_EQ(t.find(*a ^ (1ull << 40)), nullptr);  // wrong generation
    EXPECT_EQ(t.erase(*a), 10);
    EXPECT_EQ(t.find(*a), nullptr);                 // stale
    const auto c = t.insert(40);                    // reuses the slot ...
    ASSERT_TRUE(c);
    EXPECT_NE(*c, *a);                              // ... under a new number
    EXPECT_EQ(t.find(*a), nullptr);
    HandleTable<int> events(HandleKind::Event, 2, 7);
    EXPECT_EQ(events.find(*b), nullptr);            // another table's handle
    HandleTable<int> other_vm(HandleKind::Stream, 2, 8);
    other_vm.insert(1);
    EXPECT_EQ(other_vm.find(*b), nullptr);          // another VM's handle
    t.clear();
    EXPECT_EQ(t.find(*b), nullptr);
    EXPECT_EQ(t.size(), 0u);
}

// With 24 generation bits, 2^24 destroys of one slot used to bring its first
// handle back to life (43 s of stream create/destroy through the ring). The
// same code with 2 bits shows the wrap in four rounds: a slot about to reissue
// its first generation is retired, and its old handles stay refused.
TEST(HandleTable, ASlotIsRetiredBeforeItsGenerationWraps) {
    HandleTable<int, 2> t(HandleKind::Stream, 1, 0);
    std::vector<uint64_t> issued;
    for (int round = 0; round < 4; ++round) {
        const auto h = t.insert(round);
        ASSERT_TRUE(h) << "round " << round;
        issued.push_back(*h);
        ASSERT_TRUE(t.erase(*h));
    }
    // Four generations used: reusing the slot would reissue issued[0].
    EXPECT_FALSE(t.insert(99)) << "the worn-out slot was reused";
    for (uint64_t h : issued) EXPECT_EQ(t.find(h), nullptr);
    // clear() retires the same way: one generation bit, one slot, two uses.
    HandleTable<int, 1> u(HandleKind::Event, 1, 1);
    const auto first = u.insert(1);
    ASSERT_TRUE(first);
    u.clear();
    const auto second = u.insert(2); // slot 0, generation 0
    ASSERT_TRUE(second);
    EXPECT_NE(*second, *first);
    u.clear();
    EXPECT_FALSE(u.insert(3)) << "generation 1 again would revive the first handle";
    EXPECT_EQ(u.find(*first), nullptr);
}

TEST(AllocationTable, RangesQuotaAndWindows) {
    AllocationTable t(1000, 3);
    EXPECT_TRUE(t.insert(0x1000, 100));
    EXPECT_FALSE(t.insert(0x1050, 10));   // overlaps
    EXPECT_FALSE(t.insert(~0ull - 5, 10)); // wraps
    EXPECT_TRUE(t.insert(0x1064, 100));   // adjacent
    EXPECT_TRUE(t.contains(0x1000, 100));
    EXPECT_FALSE(t.contains(0x1000, 101)); // runs into the neighbour: two allocations
    EXPECT_FALSE(t.contains(0xFFF, 1));
    EXPECT_FALSE(t.contains(0x1010, ~0ull));
    EXPECT_FALSE(t.can_reserve(801));
    EXPECT_TRUE(t.can_reserve(800));
    EXPECT_TRUE(t.insert(0x9000, 800));
    EXPECT_FALSE(t.can_reserve(1)); // quota and count both spent
    EXPECT_EQ(t.erase(0x1001), 0u);
    EXPECT_EQ(t.erase(0x1000), 100u);
    EXPECT_EQ(t.used(), 900u);
    t.set_windows({{0x100000, 0x1000}});
    EXPECT_TRUE(t.contains(0x100800, 0x800));
    EXPECT_FALSE(t.contains(0x100800, 0x801));
    EXPECT_FALSE(t.in_allocation(0x100800, 1));
}

TEST(RunCursor, MovesAcrossRunBoundaries) {
    uint8_t a[5] = {1, 2, 3, 4, 5}, b[3] = {6, 7, 8};
    const memmap::HostRun runs[] = {{a, {0}, 5}, {b, {0}, 3}};
    EXPECT_EQ(total_bytes(runs), 8u);
    RunCursor g(runs);
    uint8_t buf[8] = {};
    EXPECT_EQ(g.gather(buf, 3), 3u);
    EXPECT_EQ(g.gather(buf + 3, 100), 5u);
    EXPECT_TRUE(g.done());
    EXPECT_EQ(buf[7], 8);
    std::iota(buf, buf + 8, 100);
    RunCursor s(runs);
    s.scatter(buf, 6);
    s.scatter(buf + 6, 2);
    EXPECT_EQ(a[4], 104);
    EXPECT_EQ(b[2], 107);
}

TEST(HostBackend, FakeAddressesAreNotHostPointersAndDoNotCollide) {
    HostBackend x, y;
    uint64_t dx, dy;
    ASSERT_EQ(x.mem_alloc(100, &dx), VGPU_SUCCESS);
    ASSERT_EQ(y.mem_alloc(100, &dy), VGPU_SUCCESS);
    EXPECT_NE(dx, dy);
    EXPECT_EQ(x.translate(dy, 1), nullptr);
    EXPECT_NE(x.translate(dx + 99, 1), nullptr);
    EXPECT_EQ(x.translate(dx + 99, 2), nullptr);
    EXPECT_GE(dx >> 56, 0x0Du); // non-canonical on x86-64: dereferencing it faults
    EXPECT_EQ(x.mem_free(dy), VGPU_ERROR_INVALID_VALUE);
    uint8_t ram[4096];
    ASSERT_EQ(x.register_guest_ram(ram, sizeof ram), VGPU_SUCCESS);
    const uint64_t w = x.guest_ram_device_address(ram + 10);
    EXPECT_EQ(x.translate(w, 4086), ram + 10);
    EXPECT_EQ(x.translate(w, 4087), nullptr);
    EXPECT_EQ(y.guest_ram_device_address(ram), 0u);
    BackendModule m;
    EXPECT_EQ(x.module_load({}, &m), VGPU_ERROR_INVALID_IMAGE);
}

TEST(BackendFactory, HostIsAlwaysThereAndAutoSaysWhy) {
    std::string why;
    auto h = make_backend(BackendChoice::Host, &why);
    ASSERT_TRUE(h);
    EXPECT_EQ(h.id(), VGPU_BACKEND_HOST);
    EXPECT_NE(why.find("forced"), std::string::npos);
    auto a = make_backend(BackendChoice::Auto, &why);
    ASSERT_TRUE(a);
    EXPECT_FALSE(why.empty());
    if (a.id() == VGPU_BACKEND_HOST) {
        EXPECT_NE(why.find("CUDA unavailable"), std::string::npos) << why;
    }
    BackendChoice c;
    EXPECT_TRUE(parse_backend_choice("CUDA", &c));
    EXPECT_EQ(c, BackendChoice::Cuda);
    EXPECT_FALSE(parse_backend_choice("gpu", &c));
}

} // namespace
} // namespace kvmgpu::vgpu
