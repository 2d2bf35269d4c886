// guest::PageTables over a host buffer standing in for guest RAM: mapping,
// translation, leaves, the table pool, and the SG builder on top (the
// guest's heap does exactly this with an identity window).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "guest-stub/runtime/frame_alloc.h"
#include "guest-stub/runtime/page_tables.h"
#include "guest-stub/runtime/sg_list.h"

namespace {
using namespace guest;

// 32 MiB of fake guest RAM at phys 0, 2 MiB aligned in host memory too.
class FakeRam {
public:
    static constexpr uint64_t kSize = 32ull << 20;
    FakeRam() : mem_(static_cast<uint8_t*>(std::aligned_alloc(kPage2M, kSize))) {}
    ~FakeRam() { std::free(mem_); }
    PhysWindow window() const { return PhysWindow{reinterpret_cast<uintptr_t>(mem_), 0, kSize}; }

private:
    uint8_t* mem_;
};

class GuestPageTables : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_TRUE(frames.init(1ull << 20, FakeRam::kSize));
        ASSERT_TRUE(pt.init(&frames, ram.window(), kPage4K));
    }
    FakeRam ram;
    FrameAllocator frames;
    PageTables pt;
};

constexpr uint64_t kHeap = 0x0000100000000000ull;

TEST_F(GuestPageTables, Map4KAndTranslate)
{
    ASSERT_TRUE(pt.map(kHeap, 0x345000, kPage4K, pte::kWrite));
    uint64_t pa, left;
    ASSERT_TRUE(pt.translate(kHeap + 0x123, &pa, &left));
    EXPECT_EQ(pa, 0x345123u);
    EXPECT_EQ(left, kPage4K - 0x123);
    EXPECT_FALSE(pt.translate(kHeap + kPage4K, &pa));
    uint64_t* e;
    uint64_t size;
    ASSERT_TRUE(pt.leaf(kHeap, &e, &size));
    EXPECT_EQ(size, kPage4K);
    EXPECT_EQ(*e & pte::kAddrMask, 0x345000u);
    EXPECT_TRUE(*e & pte::kWrite);
    EXPECT_EQ(pt.table_pages(), 4u); // PML4, PDPT, PD, PT
}

TEST_F(GuestPageTables, Map2M)
{
    ASSERT_TRUE(pt.map(kHeap + kPage2M, 0x400000, kPage2M, pte::kWrite | pte::kNoExecute));
    uint64_t pa, left;
    ASSERT_TRUE(pt.translate(kHeap + kPage2M + 0x12345, &pa, &left));
    EXPECT_EQ(pa, 0x412345u);
    EXPECT_EQ(left, kPage2M - 0x12345);
    uint64_t* e;
    uint64_t size;
    ASSERT_TRUE(pt.leaf(kHeap + kPage2M, &e, &size));
    EXPECT_EQ(size, kPage2M);
    EXPECT_TRUE(*e & pte::kLarge);
    EXPECT_TRUE(*e & pte::kNoExecute);
    EXPECT_EQ(pt.table_pages(), 3u); // no PT for a 2 MiB leaf
}

TEST_F(GuestPageTables, RejectsConflictsAndBadAddresses)
{
    ASSERT_TRUE(pt.map(kHeap, 0x200000, kPage2M, 0));
    EXPECT_FALSE(pt.map(kHeap, 0x400000, kPage2M, 0));            // already mapped
    EXPECT_FALSE(pt.map(kHeap + kPage4K, 0x1000, kPage4K, 0));    // inside a 2 MiB leaf
    EXPECT_FALSE(pt.map(kHeap + kPage2M + 1, 0x1000, kPage4K, 0)); // unaligned va
    EXPECT_FALSE(pt.map(kHeap + 2 * kPage2M, 0x1000, kPage2M, 0)); // unaligned pa
    EXPECT_FALSE(pt.map(1ull << 47, 0x1000, kPage4K, 0));          // not canonical (lower half)
    EXPECT_FALSE(pt.map(kHeap, 0x1000, 8192, 0));                  // no such page size
    EXPECT_FALSE(pt.map(kHeap + 4 * kPage2M, 1ull << 52, kPage4K, 0)); // pa too wide
}

TEST_F(GuestPageTables, IdentityMapLikeTheGuest)
{
    // As heap_init: first 2 MiB in 4 KiB pages without page 0, then 2 MiB.
    ASSERT_TRUE(pt.map_range(kPage4K, kPage4K, kPage2M - kPage4K, kPage4K, pte::kWrite));
    ASSERT_TRUE(pt.map_range(kPage2M, kPage2M, FakeRam::kSize - kPage2M, kPage2M, pte::kWrite));
    uint64_t pa;
    EXPECT_FALSE(pt.translate(0, &pa));
    EXPECT_FALSE(pt.translate(0xfff, &pa));
    for (uint64_t a : {uint64_t{0x1000}, uint64_t{0x1fffff}, uint64_t{0x200000}, uint64_t{0x1234567},
                       FakeRam::kSize - 1}) {
        ASSERT_TRUE(pt.translate(a, &pa)) << std::hex << a;
        EXPECT_EQ(pa, a);
    }
    EXPECT_FALSE(pt.translate(FakeRam::kSize, &pa));
    EXPECT_FALSE(pt.map_range(0, 0, 3, kPage4K, 0)); // not a page multiple
}

TEST_F(GuestPageTables, PrepareAllocatesTablesUpFront)
{
    ASSERT_TRUE(pt.prepare(kHeap, 8 * kPage2M, kPage4K));
    uint64_t pages = pt.table_pages();
    EXPECT_EQ(pages, 1u + 1 + 1 + 8); // PML4, PDPT, PD, 8 PTs
    for (uint64_t i = 0; i < 8 * 512; ++i)
        ASSERT_TRUE(pt.map(kHeap + i * kPage4K, 0x200000 + i * kPage4K, kPage4K, 0));
    EXPECT_EQ(pt.table_pages(), pages); // mapping allocated nothing more
    uint64_t pa;
    EXPECT_FALSE(pt.translate(kHeap + 8 * kPage2M, &pa));
    ASSERT_TRUE(pt.unmap(kHeap, kPage4K));
    EXPECT_FALSE(pt.translate(kHeap, &pa));
    EXPECT_FALSE(pt.unmap(kHeap, kPage4K));
    EXPECT_FALSE(pt.unmap(kHeap + kPage4K, kPage2M)); // wrong size
}

TEST_F(GuestPageTables, TablePoolExhaustionFails)
{
    FrameAllocator tiny;
    ASSERT_TRUE(tiny.init(1ull << 20, (1ull << 20) + 3 * kPage4K)); // room for 3 tables
    PageTables small;
    ASSERT_TRUE(small.init(&tiny, ram.window(), kPage4K));
    EXPECT_TRUE(small.map(kHeap, 0x200000, kPage2M, 0)); // PML4+PDPT+PD
    EXPECT_FALSE(small.map(kHeap + (1ull << 30), 0x200000, kPage2M, 0)); // needs a new PD
}

TEST_F(GuestPageTables, WindowRejectsTablesOutsideRam)
{
    PhysWindow w = ram.window();
    EXPECT_EQ(w.table(FakeRam::kSize), nullptr);
    EXPECT_EQ(w.table(FakeRam::kSize - 8), nullptr);
    EXPECT_EQ(w.table(0x1008), nullptr); // unaligned
    EXPECT_NE(w.table(FakeRam::kSize - kPage4K), nullptr);
}

bool translate_with(void* ctx, uint64_t va, uint64_t* pa, uint64_t* contig)
{
    return static_cast<PageTables*>(ctx)->translate(va, pa, contig);
}

TEST_F(GuestPageTables, ShuffledHeapGivesAnSgListThatCoversIt)
{
    // 256 pages of 4 KiB from one 1 MiB block, shuffled like pageable_alloc.
    const uint64_t pages = 256, block = 0x800000;
    std::vector<uint64_t> order(pages);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(42);
    std::shuffle(order.begin(), order.end(), rng);
    for (uint64_t i = 0; i < pages; ++i)
        ASSERT_TRUE(pt.map(kHeap + i * kPage4K, block + order[i] * kPage4K, kPage4K, 0));

    std::vector<vgpu_sg_entry> sg(pages);
    uint64_t count = 0;
    const uint64_t off = 100, bytes = pages * kPage4K - 300;
    ASSERT_EQ(build_sg_list(kHeap + off, bytes, translate_with, &pt, sg.data(), sg.size(), &count),
              SgResult::kOk);
    // Entries are exactly the page runs whose frames are consecutive.
    uint64_t expected = 1;
    for (uint64_t i = 1; i < pages; ++i)
        expected += order[i] != order[i - 1] + 1;
    EXPECT_EQ(count, expected);
    uint64_t total = 0, va = kHeap + off;
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t pa;
        ASSERT_TRUE(pt.translate(va, &pa));
        EXPECT_EQ(sg[i].gpa, pa);
        total += sg[i].len;
        va += sg[i].len;
    }
    EXPECT_EQ(total, bytes);
    EXPECT_EQ(sg[0].gpa, block + order[0] * kPage4K + off);

    // Unshuffled: one entry.
    PageTables flat;
    ASSERT_TRUE(flat.init(&frames, ram.window(), kPage4K));
    ASSERT_TRUE(flat.map_range(kHeap, block, pages * kPage4K, kPage4K, 0));
    ASSERT_EQ(build_sg_list(kHeap + off, bytes, translate_with, &flat, sg.data(), sg.size(), &count),
              SgResult::kOk);
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(sg[0].len, bytes);
}

} // namespace
