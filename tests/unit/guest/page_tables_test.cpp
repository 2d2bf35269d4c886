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

// How the guest's build_sg translates (minus its identity-RAM shortcut).
uint64_t walk_tables(void* ctx, uint64_t va, uint64_t bytes, SgWriter* sg)
{
    return static_cast<const PageTables*>(ctx)->append_sg(va, bytes, sg);
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
    ASSERT_EQ(build_sg_list(kHeap + off, bytes, walk_tables, &pt, sg.data(), sg.size(), &count),
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
    ASSERT_EQ(build_sg_list(kHeap + off, bytes, walk_tables, &flat, sg.data(), sg.size(), &count),
              SgResult::kOk);
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(sg[0].len, bytes);
}

// ---- append_sg: the page-table walk that build_sg uses ------------------

constexpr uint64_t kGiB = 1ull << 30;

// Frame numbers 0..n-1 in runs of 1..max_run consecutive ones, the runs
// shuffled: some neighbours merge, most do not.
std::vector<uint64_t> shuffled_runs(uint64_t n, uint64_t max_run, std::mt19937_64& rng)
{
    std::vector<std::vector<uint64_t>> runs;
    for (uint64_t f = 0; f < n;) {
        uint64_t len = std::min<uint64_t>(n - f, 1 + rng() % max_run);
        runs.emplace_back(len);
        std::iota(runs.back().begin(), runs.back().end(), f);
        f += len;
    }
    std::shuffle(runs.begin(), runs.end(), rng);
    std::vector<uint64_t> out;
    for (const auto& r : runs)
        out.insert(out.end(), r.begin(), r.end());
    return out;
}

struct SgOutcome {
    SgResult result;
    std::vector<std::pair<uint64_t, uint64_t>> entries; // (gpa, len)
};

// The builder as it was before append_sg: a full walk per page.
SgOutcome per_page_sg(const PageTables& pt, uint64_t va, uint64_t bytes, uint64_t max)
{
    SgOutcome o{SgResult::kOk, {}};
    for (uint64_t done = 0; done < bytes;) {
        uint64_t pa, left;
        if (!pt.translate(va + done, &pa, &left))
            return o.result = SgResult::kUnmapped, o;
        uint64_t len = std::min(left, bytes - done);
        if (!o.entries.empty() && o.entries.back().first + o.entries.back().second == pa)
            o.entries.back().second += len;
        else if (o.entries.size() == max)
            return o.result = SgResult::kTooMany, o;
        else
            o.entries.emplace_back(pa, len);
        done += len;
    }
    return o;
}

struct CountedWalk {
    const PageTables* pt;
    int steps = 0;
};

uint64_t counted_walk(void* ctx, uint64_t va, uint64_t bytes, SgWriter* sg)
{
    auto* w = static_cast<CountedWalk*>(ctx);
    ++w->steps;
    return w->pt->append_sg(va, bytes, sg);
}

SgOutcome walked_sg(const PageTables& pt, uint64_t va, uint64_t bytes, uint64_t max, int* steps = nullptr)
{
    std::vector<vgpu_sg_entry> out(max);
    uint64_t count = 12345;
    CountedWalk w{&pt};
    SgOutcome o{build_sg_list(va, bytes, counted_walk, &w, out.data(), max, &count), {}};
    for (uint64_t i = 0; i < count; ++i)
        o.entries.emplace_back(out[i].gpa, out[i].len);
    if (steps != nullptr)
        *steps = w.steps;
    return o;
}

::testing::AssertionResult same_as_per_page(const PageTables& pt, uint64_t va, uint64_t bytes,
                                            uint64_t max)
{
    SgOutcome want = per_page_sg(pt, va, bytes, max), got = walked_sg(pt, va, bytes, max);
    if (want.result == got.result && want.entries == got.entries)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << std::hex << "va 0x" << va << " bytes 0x" << bytes << std::dec << " max " << max
           << ": per page " << sg_result_name(want.result) << " with " << want.entries.size()
           << " entries, walked " << sg_result_name(got.result) << " with " << got.entries.size();
}

// Random sub-ranges of [first, first + bytes) (some running past its end),
// at random and exactly-fitting capacities: append_sg gives what a walk per
// page gives.
void check_random_ranges(const PageTables& pt, uint64_t first, uint64_t bytes, uint64_t page,
                         std::mt19937_64& rng)
{
    for (int trial = 0; trial < 400; ++trial) {
        uint64_t start = rng() % bytes;
        uint64_t len = 1 + rng() % (bytes - start + 3 * page); // may run into unmapped VA
        if (trial % 4 == 0)
            len = 1 + rng() % (3 * page); // short: inside one page or across a few
        uint64_t va = first + start;
        uint64_t fits = std::max<uint64_t>(per_page_sg(pt, va, len, UINT64_MAX).entries.size(), 2);
        for (uint64_t max : {fits, fits - 1, 1 + rng() % (fits + 1), uint64_t{1}})
            ASSERT_TRUE(same_as_per_page(pt, va, len, max)) << "trial " << trial;
    }
}

TEST_F(GuestPageTables, AppendSg4KMatchesAWalkPerPage)
{
    // 4 KiB pages from 5 pages before a leaf table's end, across two more
    // tables and the 1 GiB boundary (a new PD too), on shuffled frames;
    // unmapped before and after.
    const uint64_t pages = 3 * 512 + 77, va0 = kHeap + kGiB - 2 * kPage2M - 5 * kPage4K;
    std::mt19937_64 rng(7);
    std::vector<uint64_t> frames = shuffled_runs(pages, 24, rng);
    // One physical run across the GiB boundary: 6 pages, two leaf tables.
    const uint64_t gib_page = (kHeap + kGiB - va0) / kPage4K;
    for (uint64_t k = 0; k < 6; ++k)
        frames[gib_page - 3 + k] = pages + 10 + k;
    const uint64_t pa0 = 0x40000000; // frames need not lie in the fake RAM
    for (uint64_t i = 0; i < pages; ++i)
        ASSERT_TRUE(pt.map(va0 + i * kPage4K, pa0 + frames[i] * kPage4K, kPage4K, pte::kWrite));

    int steps = 0;
    SgOutcome all = walked_sg(pt, va0, pages * kPage4K, pages, &steps);
    ASSERT_EQ(all.result, SgResult::kOk);
    EXPECT_EQ(steps, 5); // one walk per leaf table, not per page
    EXPECT_TRUE(same_as_per_page(pt, va0, pages * kPage4K, pages));
    auto across = std::find(all.entries.begin(), all.entries.end(),
                            std::make_pair(pa0 + (pages + 10) * kPage4K, 6 * kPage4K));
    EXPECT_NE(across, all.entries.end()) << "the run across the GiB boundary is one entry";

    check_random_ranges(pt, va0, pages * kPage4K, kPage4K, rng);
}

TEST_F(GuestPageTables, AppendSg2MMatchesAWalkPerPage)
{
    // 2 MiB pages on shuffled frames across the 1 GiB boundary (two PDs,
    // each a leaf table of its own), then 2 MiB of 4 KiB pages in the same
    // PD that continue the last frame, then unmapped.
    const uint64_t big = 48, va0 = kHeap + kGiB - 24 * kPage2M, pa0 = 1ull << 40;
    std::mt19937_64 rng(11);
    std::vector<uint64_t> frames = shuffled_runs(big, 4, rng);
    for (uint64_t i = 0; i < big; ++i)
        ASSERT_TRUE(pt.map(va0 + i * kPage2M, pa0 + frames[i] * kPage2M, kPage2M, 0));
    const uint64_t small_va = va0 + big * kPage2M, small_pa = pa0 + (frames.back() + 1) * kPage2M;
    ASSERT_TRUE(pt.map_range(small_va, small_pa, kPage2M, kPage4K, 0));

    const uint64_t bytes = (big + 1) * kPage2M;
    int steps = 0;
    SgOutcome all = walked_sg(pt, va0, bytes, big + 1, &steps);
    ASSERT_EQ(all.result, SgResult::kOk);
    EXPECT_EQ(steps, 3); // each PD's run, then the page table
    EXPECT_TRUE(same_as_per_page(pt, va0, bytes, big + 1));
    EXPECT_EQ(all.entries.back().first + all.entries.back().second, small_pa + kPage2M)
        << "the 4 KiB pages continue the last 2 MiB entry";

    check_random_ranges(pt, va0, bytes, kPage2M, rng);
}

TEST_F(GuestPageTables, AppendSgTooManyAtExactCapacity)
{
    // 1024 pages across a leaf table's end on descending frames: never merged.
    const uint64_t pages = 1024, va0 = kHeap + kPage2M - 512 * kPage4K + 3 * kPage4K;
    for (uint64_t i = 0; i < pages; ++i)
        ASSERT_TRUE(pt.map(va0 + i * kPage4K, 0x80000000 - i * kPage4K, kPage4K, 0));
    const uint64_t off = 0x123, bytes = pages * kPage4K - off;
    SgOutcome exact = walked_sg(pt, va0 + off, bytes, pages);
    EXPECT_EQ(exact.result, SgResult::kOk);
    EXPECT_EQ(exact.entries.size(), pages);
    EXPECT_EQ(exact.entries[0], std::make_pair(0x80000000 + off, kPage4K - off));
    SgOutcome short_one = walked_sg(pt, va0 + off, bytes, pages - 1);
    EXPECT_EQ(short_one.result, SgResult::kTooMany);
    ASSERT_EQ(short_one.entries.size(), pages - 1);
    uint64_t covered = 0;
    for (const auto& e : short_one.entries)
        covered += e.second;
    EXPECT_EQ(covered, bytes - kPage4K); // a prefix: all but the last page
    EXPECT_TRUE(same_as_per_page(pt, va0 + off, bytes, pages - 1));

    // append_sg itself: one leaf table's worth per call; when full, the
    // bytes of the pieces that went in.
    std::vector<vgpu_sg_entry> out(pages);
    SgWriter roomy(out.data(), pages);
    EXPECT_EQ(pt.append_sg(va0 + off, bytes, &roomy), 509 * kPage4K - off);
    SgWriter three(out.data(), 3);
    EXPECT_EQ(pt.append_sg(va0 + off, bytes, &three), 3 * kPage4K - off);
    EXPECT_TRUE(three.full());
    EXPECT_EQ(pt.append_sg(va0 + 4 * kPage4K, bytes, &three), 0u);
    EXPECT_EQ(pt.append_sg(va0 + off, 0, &roomy), 0u);
}

TEST_F(GuestPageTables, AppendSgOverTheGuestIdentityMap)
{
    // As heap_init maps RAM: a page table for the first 2 MiB (page 0 not
    // mapped), then 2 MiB leaves. Everything after page 0 is one entry.
    ASSERT_TRUE(pt.map_range(kPage4K, kPage4K, kPage2M - kPage4K, kPage4K, pte::kWrite));
    ASSERT_TRUE(pt.map_range(kPage2M, kPage2M, FakeRam::kSize - kPage2M, kPage2M, pte::kWrite));
    int steps = 0;
    SgOutcome all = walked_sg(pt, kPage4K + 5, FakeRam::kSize - kPage4K - 5, 1, &steps);
    EXPECT_EQ(all.result, SgResult::kOk);
    ASSERT_EQ(all.entries.size(), 1u);
    EXPECT_EQ(all.entries[0], std::make_pair(kPage4K + 5, FakeRam::kSize - kPage4K - 5));
    EXPECT_EQ(steps, 2);
    SgOutcome from_zero = walked_sg(pt, 0, 2 * kPage4K, 4);
    EXPECT_EQ(from_zero.result, SgResult::kUnmapped);
    EXPECT_TRUE(from_zero.entries.empty());
    SgOutcome past_ram = walked_sg(pt, FakeRam::kSize - 16, 32, 4);
    EXPECT_EQ(past_ram.result, SgResult::kUnmapped);
    EXPECT_EQ(past_ram.entries, (std::vector<std::pair<uint64_t, uint64_t>>{{FakeRam::kSize - 16, 16}}));
    uint64_t* e;
    uint64_t size;
    EXPECT_EQ(pt.leaf_run(kPage4K, &e, &size), 511u);
    EXPECT_EQ(pt.leaf_run(kPage2M * 3 + 5, &e, &size), 509u);
    EXPECT_EQ(size, kPage2M);
    EXPECT_EQ(pt.leaf_run(0, &e, &size), 0u);
}

} // namespace
