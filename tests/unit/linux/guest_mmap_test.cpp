// The brk/mmap allocator over guest RAM: placement, zeroing, brk against
// mappings, MAP_FIXED, mremap, and sizes that cannot be met.
#include <gtest/gtest.h>

#include <cstring>

#include "kvmtool-gpu/vmm/linux/guest_mmap.h"
#include "memmap/backing.h"

namespace kvmgpu::linux_abi {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

TEST(IntervalSet, MergesSplitsAndFits) {
    IntervalSet s;
    s.add(0x1000, 0x3000);
    s.add(0x3000, 0x5000); // touching: merged
    EXPECT_EQ(s.pieces(), 1u);
    s.remove(0x2000, 0x3000);
    EXPECT_EQ(s.pieces(), 2u);
    EXPECT_TRUE(s.contains(0x1000, 0x2000));
    EXPECT_FALSE(s.contains(0x1000, 0x3000));
    EXPECT_TRUE(s.intersects(0x1fff, 0x2001));
    EXPECT_FALSE(s.intersects(0x2000, 0x3000));
    EXPECT_EQ(s.highest_fit(0x1000), 0x4000u);
    EXPECT_EQ(s.highest_fit(0x2000), 0x3000u);
    EXPECT_FALSE(s.highest_fit(0x3000));
    EXPECT_EQ(s.total(), 0x3000u);
    s.add(0, ~0ull);
    EXPECT_EQ(s.pieces(), 1u);
}

struct AddressSpace : ::testing::Test {
    memmap::GuestMemory mem;
    std::unique_ptr<GuestAddressSpace> as;
    void SetUp() override {
        mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 32 * kMiB));
        as = std::make_unique<GuestAddressSpace>(mem, 1 * kMiB, 28 * kMiB, 8 * kMiB);
        as->reserve(4 * kMiB, 8 * kMiB); // the program
    }
    uint8_t* at(uint64_t gpa) { return mem.translate(memmap::GuestPhysAddr{gpa}, 1)->data(); }
};

TEST_F(AddressSpace, MmapIsTopDownDisjointAndZero) {
    const auto a = as->map_anywhere(3 * 4096 - 5);
    const auto b = as->map_anywhere(kMiB);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(*a, 28 * kMiB - 3 * 4096);
    EXPECT_EQ(*b + kMiB, *a);
    std::memset(at(*b), 0xAB, kMiB);
    as->unmap(*b, kMiB);
    const auto c = as->map_anywhere(kMiB);
    ASSERT_TRUE(c);
    EXPECT_EQ(*c, *b);
    for (uint64_t i = 0; i < kMiB; i += 4093) ASSERT_EQ(at(*c)[i], 0) << i; // reused memory comes back zero
}

// MADV_DONTNEED zeroes what brk and mmap handed out, not the program's own
// pages (its code and data would be gone), until the program unmaps them.
TEST_F(AddressSpace, DontneedZeroesMappingsNotTheProgram) {
    const auto m = as->map_anywhere(4096);
    ASSERT_TRUE(m);
    std::memset(at(*m), 0x11, 4096);
    std::memset(at(4 * kMiB), 0x22, 4096);
    as->zero_in_use(0, 64 * kMiB);
    EXPECT_EQ(at(*m)[0], 0);
    EXPECT_EQ(at(4 * kMiB)[0], 0x22);
    as->unmap(4 * kMiB, 4096);
    ASSERT_TRUE(as->map_fixed(4 * kMiB, 4096, false));
    std::memset(at(4 * kMiB), 0x33, 4096);
    as->zero_in_use(4 * kMiB, 4096);
    EXPECT_EQ(at(4 * kMiB)[0], 0);
}

TEST_F(AddressSpace, HugeAndWrappingSizesAreRefused) {
    EXPECT_FALSE(as->map_anywhere(64 * kMiB));
    EXPECT_FALSE(as->map_anywhere(~0ull));
    EXPECT_FALSE(as->map_anywhere(0));
    EXPECT_FALSE(as->map_fixed(~0ull & ~0xfffull, 0x2000, true));
    EXPECT_FALSE(as->map_fixed(0, 4096, true));        // page 0 is not the allocator's
    EXPECT_FALSE(as->map_fixed(6 * kMiB, 4096, false)); // the program's pages are in use
    EXPECT_FALSE(as->map_fixed(30 * kMiB, 4096, true)); // nor the stack
    EXPECT_FALSE(as->map_fixed(2 * kMiB + 1, 4096, true));
    EXPECT_EQ(as->brk(~0ull), 8 * kMiB);
}

TEST_F(AddressSpace, BrkGrowsShrinksAndStopsAtAMapping) {
    EXPECT_EQ(as->brk(0), 8 * kMiB);
    EXPECT_EQ(as->brk(8 * kMiB + 100), 8 * kMiB + 100);
    std::memset(at(8 * kMiB), 0xCD, 100);
    EXPECT_EQ(as->brk(8 * kMiB), 8 * kMiB);
    EXPECT_EQ(as->brk(8 * kMiB + 4096), 8 * kMiB + 4096);
    EXPECT_EQ(at(8 * kMiB)[50], 0); // given back, then handed out again: zero
    ASSERT_TRUE(as->map_fixed(9 * kMiB, 4096, false));
    EXPECT_EQ(as->brk(10 * kMiB), 8 * kMiB + 4096); // refused: a mapping is in the way
    EXPECT_EQ(as->brk(9 * kMiB), 9 * kMiB);
    EXPECT_EQ(as->brk(4 * kMiB), 9 * kMiB); // below the start: unchanged
    as->unmap(8 * kMiB, kMiB); // the brk area is brk's
    EXPECT_FALSE(as->map_fixed(8 * kMiB, 4096, false));
}

TEST_F(AddressSpace, MapFixedReplacesOrRefuses) {
    ASSERT_TRUE(as->map_fixed(2 * kMiB, 8192, false));
    std::memset(at(2 * kMiB), 0x11, 8192);
    EXPECT_FALSE(as->map_fixed(2 * kMiB + 4096, 8192, false)); // MAP_FIXED_NOREPLACE: in use
    ASSERT_TRUE(as->map_fixed(2 * kMiB + 4096, 8192, true));
    EXPECT_EQ(at(2 * kMiB)[0], 0x11);
    EXPECT_EQ(at(2 * kMiB + 4096)[0], 0); // replaced: fresh, zero
    EXPECT_TRUE(as->is_mapped(2 * kMiB, 3 * 4096));
    as->unmap(2 * kMiB, 3 * 4096);
    EXPECT_FALSE(as->is_mapped(2 * kMiB, 4096));
    as->unmap(0, ~0ull); // anything outside is left alone, nothing wraps
}

TEST_F(AddressSpace, RemapGrowsInPlaceOrMovesWithTheData) {
    const auto a = as->map_anywhere(4096);
    ASSERT_TRUE(a);
    at(*a)[10] = 42;
    // The top mapping cannot grow upward (the managed range ends): it moves.
    const auto moved = as->remap(*a, 4096, 3 * 4096, true);
    ASSERT_TRUE(moved);
    EXPECT_NE(*moved, *a);
    EXPECT_EQ(at(*moved)[10], 42);
    EXPECT_FALSE(as->is_mapped(*a, 4096));
    EXPECT_FALSE(as->remap(*moved, 3 * 4096, 64 * kMiB, true));
    ASSERT_TRUE(as->map_fixed(3 * kMiB, 4096, false));
    EXPECT_EQ(as->remap(3 * kMiB, 4096, 8192, false), 3 * kMiB); // free above it: in place
    EXPECT_EQ(as->remap(3 * kMiB, 8192, 4096, false), 3 * kMiB);
    EXPECT_FALSE(as->is_mapped(3 * kMiB + 4096, 4096));
    EXPECT_FALSE(as->remap(2 * kMiB, 4096, 8192, true)); // not a mapping
}

} // namespace
} // namespace kvmgpu::linux_abi
