// Scatter-gather: merging by host contiguity, whole-list rejection, stats,
// and a randomized comparison against a deliberately naive reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "memmap/scatter_gather.h"

using memmap::Backing;
using memmap::GuestMemory;
using memmap::GuestPhysAddr;
using memmap::GuestRange;
using memmap::HostRun;
using memmap::PageSize;
using memmap::SgStats;

namespace {

GuestRange R(uint64_t gpa, uint64_t len) { return GuestRange{GuestPhysAddr{gpa}, len}; }

// A: [0, 64K)  B: [64K, 128K), adjacent in guest-physical space only.
class SgTest : public ::testing::Test {
protected:
    void SetUp() override {
        mem.add_region(GuestPhysAddr{0x0}, Backing::create(PageSize::k4K, 0x10000));
        mem.add_region(GuestPhysAddr{0x10000}, Backing::create(PageSize::k4K, 0x10000));
    }
    uint8_t* a() const { return mem.regions()[0].backing->data(); }
    uint8_t* b() const { return mem.regions()[1].backing->data(); }
    GuestMemory mem;
};

TEST_F(SgTest, AdjacentRangesMergeIntoOneRun) {
    const GuestRange in[] = {R(0x1000, 0x100), R(0x1100, 0x200), R(0x1300, 0xd00)};
    SgStats st;
    const auto runs = memmap::coalesce(mem, in, &st);
    ASSERT_TRUE(runs.has_value());
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ((*runs)[0].host, a() + 0x1000);
    EXPECT_EQ((*runs)[0].gpa.value, 0x1000u);
    EXPECT_EQ((*runs)[0].len, 0x1000u);
    EXPECT_EQ(st.entries, 3u);
    EXPECT_EQ(st.runs, 1u);
    EXPECT_EQ(st.total_bytes, 0x1000u);
}

TEST_F(SgTest, GapsAndBackwardsNeighboursDoNotMerge) {
    const GuestRange in[] = {R(0x1000, 0x100), R(0x1200, 0x100), R(0x1100, 0x100), R(0x1300, 0x10)};
    SgStats st;
    const auto runs = memmap::coalesce(mem, in, &st);
    ASSERT_TRUE(runs.has_value());
    // 0x1000 | gap | 0x1200 | backwards to 0x1100 | jumps to 0x1300 after 0x1200: 0x1100+0x100 = 0x1200 != 0x1300
    ASSERT_EQ(runs->size(), 4u);
    EXPECT_EQ((*runs)[1].host, a() + 0x1200);
    EXPECT_EQ((*runs)[2].host, a() + 0x1100);
    EXPECT_EQ(st.runs, 4u);
    EXPECT_EQ(st.total_bytes, 0x310u);
}

TEST_F(SgTest, GuestContiguousAcrossRegionsMergesOnlyIfHostContiguous) {
    // The last byte of A and the first of B are neighbours in guest-physical
    // space; they are one host run only if the two mmaps happen to abut.
    const GuestRange in[] = {R(0xff00, 0x100), R(0x10000, 0x100)};
    const auto runs = memmap::coalesce(mem, in);
    ASSERT_TRUE(runs.has_value());
    const bool abut = a() + 0x10000 == b();
    ASSERT_EQ(runs->size(), abut ? 1u : 2u);
    if (!abut) {
        EXPECT_EQ((*runs)[1].host, b());
    }

    // And the reverse: B's tail then A's head merge exactly when B's mapping
    // sits right below A's (mmap usually places later mappings lower).
    const GuestRange rev[] = {R(0x1ff00, 0x100), R(0x0, 0x100)};
    const auto runs2 = memmap::coalesce(mem, rev);
    ASSERT_TRUE(runs2.has_value());
    const bool below = b() + 0x10000 == a();
    ASSERT_EQ(runs2->size(), below ? 1u : 2u);
    EXPECT_EQ((*runs2)[0].gpa.value, 0x1ff00u);
    EXPECT_EQ((*runs2)[0].len, below ? 0x200u : 0x100u);
}

TEST_F(SgTest, TranslateEachNeverMerges) {
    const GuestRange in[] = {R(0x1000, 0x100), R(0x1100, 0x100), R(0x12000, 0x8)};
    SgStats st;
    const auto runs = memmap::translate_each(mem, in, &st);
    ASSERT_TRUE(runs.has_value());
    ASSERT_EQ(runs->size(), 3u);
    EXPECT_EQ((*runs)[1].host, a() + 0x1100);
    EXPECT_EQ((*runs)[2].host, b() + 0x2000);
    EXPECT_EQ((*runs)[2].gpa.value, 0x12000u);
    EXPECT_EQ(st.entries, 3u);
    EXPECT_EQ(st.runs, 3u);
    EXPECT_EQ(st.total_bytes, 0x208u);
}

TEST_F(SgTest, OneBadEntryRejectsTheWholeListAndZeroesStats) {
    const std::vector<std::vector<GuestRange>> bad = {
        {R(0x1000, 0x100), R(0x1100, 0)},                      // empty range
        {R(0x1000, 0x100), R(0x20000, 1)},                     // outside RAM
        {R(0xfff0, 0x20), R(0x0, 1)},                          // straddles A|B
        {R(0x0, 1), R(std::numeric_limits<uint64_t>::max(), 2)}, // wraps
        {R(0x0, 1), R(0x1, std::numeric_limits<uint64_t>::max())},
    };
    for (size_t i = 0; i < bad.size(); ++i) {
        SgStats st{7, 7, 7};
        EXPECT_FALSE(memmap::coalesce(mem, bad[i], &st).has_value()) << i;
        EXPECT_EQ(st.entries + st.runs + st.total_bytes, 0u) << i;
        st = SgStats{7, 7, 7};
        EXPECT_FALSE(memmap::translate_each(mem, bad[i], &st).has_value()) << i;
        EXPECT_EQ(st.entries + st.runs + st.total_bytes, 0u) << i;
    }
}

TEST_F(SgTest, EmptyListIsAnEmptyTransfer) {
    SgStats st{7, 7, 7};
    const auto runs = memmap::coalesce(mem, std::span<const GuestRange>{}, &st);
    ASSERT_TRUE(runs.has_value());
    EXPECT_TRUE(runs->empty());
    EXPECT_EQ(st.entries + st.runs + st.total_bytes, 0u);
}

TEST(SgOverflow, TotalLengthPastTwoToTheSixtyFourIsRefused) {
    // One 32 TiB region, reserved but never touched (MAP_NORESERVE): 2^19
    // whole-region entries add up to exactly 2^64.
    constexpr uint64_t kRegion = 1ull << 45;
    GuestMemory mem;
    try {
        mem.add_region(GuestPhysAddr{0}, Backing::create(PageSize::k4K, kRegion));
    } catch (const std::system_error& e) {
        GTEST_SKIP() << "cannot reserve 32 TiB of address space here: " << e.what();
    }
    std::vector<GuestRange> ranges((1u << 19) - 1, R(0, kRegion));
    SgStats st;
    const auto ok = memmap::translate_each(mem, ranges, &st);
    ASSERT_TRUE(ok.has_value());
    EXPECT_EQ(st.total_bytes, 0 - kRegion); // 2^64 - 2^45
    ranges.push_back(R(0, kRegion));
    EXPECT_FALSE(memmap::translate_each(mem, ranges).has_value());
    EXPECT_FALSE(memmap::coalesce(mem, ranges).has_value());
}

// ---- randomized comparison with a naive reference ---------------------------

struct RefRegion {
    uint64_t base, size;
    uint8_t* host;
};

// Byte-exact reference: finds the region by linear search with 128-bit
// arithmetic, merges by comparing host addresses. Independent of
// GuestMemory::translate.
std::optional<std::vector<HostRun>> reference(const std::vector<RefRegion>& regs, const std::vector<GuestRange>& in,
                                              bool merge) {
    std::vector<HostRun> out;
    for (const GuestRange& r : in) {
        const RefRegion* hit = nullptr;
        for (const RefRegion& g : regs) {
            const unsigned __int128 end = static_cast<unsigned __int128>(r.gpa.value) + r.len;
            if (r.len > 0 && g.base <= r.gpa.value && end <= static_cast<unsigned __int128>(g.base) + g.size) hit = &g;
        }
        if (!hit) return std::nullopt;
        uint8_t* h = hit->host + (r.gpa.value - hit->base);
        if (merge && !out.empty() && out.back().host + out.back().len == h) {
            out.back().len += r.len;
        } else {
            out.push_back(HostRun{h, r.gpa, r.len});
        }
    }
    return out;
}

TEST(SgProperty, MatchesNaiveReferenceOnRandomLists) {
    GuestMemory mem;
    const std::pair<uint64_t, uint64_t> layout[] = {
        {0x0, 0x4000}, {0x4000, 0x2000}, {0x10000, 0x8000}, {0x18000, 0x1000}, {0x40000, 0x3000}};
    std::vector<RefRegion> regs;
    for (const auto& [base, size] : layout) {
        mem.add_region(GuestPhysAddr{base}, Backing::create(PageSize::k4K, size));
    }
    for (const auto& r : mem.regions()) regs.push_back({r.base.value, r.size(), r.backing->data()});
    // Distinct content per guest byte, to check runs describe the same bytes.
    for (const RefRegion& g : regs)
        for (uint64_t i = 0; i < g.size; ++i) g.host[i] = static_cast<uint8_t>((g.base + i) * 2654435761u >> 13);

    std::mt19937_64 rng(0x5eed);
    auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
    int valid_lists = 0, merged_lists = 0, long_lists = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        std::vector<GuestRange> in(pick(24));
        uint64_t next = 0;
        for (GuestRange& r : in) {
            const RefRegion& g = regs[pick(regs.size())];
            // Mostly valid entries (so long lists survive), a few hostile ones.
            const uint64_t kind = pick(40);
            if (kind == 0) {
                r = R(pick(0x50000), pick(0x3000) + 1); // anywhere: often invalid
            } else if (kind == 1) {
                r = R(g.base + pick(g.size), pick(3)); // may be empty
            } else if (kind == 2) {
                r = R(g.base + g.size - pick(4) - 1, pick(8) + 1); // around the end
            } else if (kind < 20) {
                r = R(next, pick(0x100) + 1); // continue the last: merges, or runs off / straddles
            } else {
                const uint64_t off = pick(g.size);
                r = R(g.base + off, pick(std::min<uint64_t>(g.size - off, 0x800)) + 1);
            }
            next = r.gpa.value + r.len;
        }
        for (bool merge : {true, false}) {
            SgStats st;
            const auto got = merge ? memmap::coalesce(mem, in, &st) : memmap::translate_each(mem, in, &st);
            const auto want = reference(regs, in, merge);
            ASSERT_EQ(got.has_value(), want.has_value()) << "iteration " << iter;
            if (!got) continue;
            ASSERT_EQ(got->size(), want->size()) << "iteration " << iter;
            uint64_t total = 0;
            for (size_t i = 0; i < got->size(); ++i) {
                EXPECT_EQ((*got)[i].host, (*want)[i].host);
                EXPECT_EQ((*got)[i].gpa, (*want)[i].gpa);
                EXPECT_EQ((*got)[i].len, (*want)[i].len);
                total += (*got)[i].len;
            }
            EXPECT_EQ(st.entries, in.size());
            EXPECT_EQ(st.runs, got->size());
            EXPECT_EQ(st.total_bytes, total);
            // The runs carry exactly the bytes the list names, in order.
            std::vector<uint8_t> via_runs, via_read;
            for (const HostRun& h : *got) via_runs.insert(via_runs.end(), h.host, h.host + h.len);
            for (const GuestRange& r : in) {
                std::vector<uint8_t> buf(r.len);
                ASSERT_TRUE(mem.read(r.gpa, buf.data(), r.len));
                via_read.insert(via_read.end(), buf.begin(), buf.end());
            }
            ASSERT_EQ(via_runs, via_read) << "iteration " << iter;
            if (merge) {
                valid_lists += !in.empty();
                long_lists += in.size() >= 12;
                merged_lists += got->size() < in.size();
                // Maximal: no two consecutive runs are host-contiguous.
                for (size_t i = 1; i < got->size(); ++i)
                    EXPECT_NE((*got)[i - 1].host + (*got)[i - 1].len, (*got)[i].host);
            }
        }
    }
    // The generator must exercise both outcomes, or this test proves little.
    EXPECT_GT(valid_lists, 100);
    EXPECT_GT(merged_lists, 50);
    EXPECT_GT(long_lists, 50);
}

} // namespace
