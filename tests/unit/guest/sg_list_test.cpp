// guest::build_sg_list and SgWriter with a scripted translation: merging,
// page ends, bounds, steps of several pieces, and errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "guest-stub/runtime/sg_list.h"

namespace {
using namespace guest;

constexpr uint64_t kPage = 4096;

// va page -> pa page; unmapped pages are absent.
struct MockMap {
    std::map<uint64_t, uint64_t> pages;
    int calls = 0;
};

// One page per step, as a per-page translation would.
uint64_t mock_translate(void* ctx, uint64_t va, uint64_t bytes, SgWriter* sg)
{
    auto* m = static_cast<MockMap*>(ctx);
    ++m->calls;
    auto it = m->pages.find(va & ~(kPage - 1));
    if (it == m->pages.end())
        return 0;
    return sg_add_piece(sg, it->second + (va & (kPage - 1)), kPage - (va & (kPage - 1)), bytes);
}

TEST(GuestSgList, MergesContiguousNeighbours)
{
    MockMap m;
    m.pages = {{0x10000, 0xA000}, {0x11000, 0xB000}, {0x12000, 0x5000}, {0x13000, 0x6000},
               {0x14000, 0x7000}, {0x15000, 0x1000}};
    std::vector<vgpu_sg_entry> sg(8);
    uint64_t n;
    ASSERT_EQ(build_sg_list(0x10000, 6 * kPage, mock_translate, &m, sg.data(), sg.size(), &n),
              SgResult::kOk);
    ASSERT_EQ(n, 3u);
    EXPECT_EQ(sg[0].gpa, 0xA000u);
    EXPECT_EQ(sg[0].len, 2 * kPage);
    EXPECT_EQ(sg[1].gpa, 0x5000u);
    EXPECT_EQ(sg[1].len, 3 * kPage);
    EXPECT_EQ(sg[2].gpa, 0x1000u);
    EXPECT_EQ(sg[2].len, kPage);
    EXPECT_EQ(m.calls, 6); // one translation per page
}

TEST(GuestSgList, UnalignedStartAndEnd)
{
    MockMap m;
    m.pages = {{0x10000, 0x8000}, {0x11000, 0x3000}};
    std::vector<vgpu_sg_entry> sg(4);
    uint64_t n;
    ASSERT_EQ(build_sg_list(0x10ff0, 0x20, mock_translate, &m, sg.data(), sg.size(), &n),
              SgResult::kOk);
    ASSERT_EQ(n, 2u);
    EXPECT_EQ(sg[0].gpa, 0x8ff0u);
    EXPECT_EQ(sg[0].len, 0x10u);
    EXPECT_EQ(sg[1].gpa, 0x3000u);
    EXPECT_EQ(sg[1].len, 0x10u);
    ASSERT_EQ(build_sg_list(0x10010, 0x10, mock_translate, &m, sg.data(), sg.size(), &n),
              SgResult::kOk);
    ASSERT_EQ(n, 1u);
    EXPECT_EQ(sg[0].gpa, 0x8010u);
    EXPECT_EQ(sg[0].len, 0x10u);
}

TEST(GuestSgList, BoundedOutput)
{
    MockMap m;
    for (uint64_t i = 0; i < 10; ++i)
        m.pages[0x10000 + i * kPage] = 0x100000 - i * kPage; // descending: never merges
    std::vector<vgpu_sg_entry> sg(10);
    uint64_t n;
    EXPECT_EQ(build_sg_list(0x10000, 10 * kPage, mock_translate, &m, sg.data(), 9, &n),
              SgResult::kTooMany);
    EXPECT_EQ(n, 9u);
    EXPECT_EQ(build_sg_list(0x10000, 10 * kPage, mock_translate, &m, sg.data(), 10, &n),
              SgResult::kOk);
    EXPECT_EQ(n, 10u);
}

TEST(GuestSgList, FullListStillMergesANeighbour)
{
    // At exact capacity a piece that continues the last entry still fits;
    // the next one that does not is kTooMany and the list covers a prefix.
    MockMap m;
    m.pages = {{0x10000, 0x8000}, {0x11000, 0x3000}, {0x12000, 0x4000}, {0x13000, 0x9000}};
    vgpu_sg_entry sg[2];
    uint64_t n;
    EXPECT_EQ(build_sg_list(0x10000, 3 * kPage, mock_translate, &m, sg, 2, &n), SgResult::kOk);
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(sg[1].len, 2 * kPage);
    EXPECT_EQ(build_sg_list(0x10000, 4 * kPage, mock_translate, &m, sg, 2, &n), SgResult::kTooMany);
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(sg[0].len + sg[1].len, 3 * kPage);
}

TEST(GuestSgWriter, MergesAndStaysFull)
{
    vgpu_sg_entry out[2];
    SgWriter w(out, 2);
    EXPECT_TRUE(w.add(0x1000, 0x10));
    EXPECT_TRUE(w.add(0x1010, 0x20)); // continues: merged
    EXPECT_TRUE(w.add(0x5000, 0x10));
    EXPECT_FALSE(w.full());
    EXPECT_FALSE(w.add(0x9000, 1));
    EXPECT_TRUE(w.full());
    EXPECT_TRUE(w.add(0x5010, 8)); // still merges into the last entry
    EXPECT_EQ(w.count(), 2u);
    EXPECT_EQ(out[0].len, 0x30u);
    EXPECT_EQ(out[1].len, 0x18u);
    EXPECT_EQ(sg_add_piece(&w, 0x5018, 0x100, 0x10), 0x10u); // clipped to what is asked
    EXPECT_EQ(sg_add_piece(&w, 0x5028, 0, 0x10), 0u);        // nothing contiguous
}

TEST(GuestSgList, StepOfSeveralPiecesStopsWhenFull)
{
    // A translation that hands over several pieces per step (as a page-table
    // run does): filling up mid-step is kTooMany with the pieces that fit.
    auto four_pieces = [](void*, uint64_t va, uint64_t bytes, SgWriter* sg) -> uint64_t {
        uint64_t done = 0;
        for (int i = 0; i < 4 && done < bytes; ++i) {
            uint64_t len = bytes - done < kPage ? bytes - done : kPage;
            if (!sg->add(0x100000 - (va + done) / 2, len)) // descending: never merges
                return done;
            done += len;
        }
        return done;
    };
    vgpu_sg_entry sg[8];
    uint64_t n;
    EXPECT_EQ(build_sg_list(0x10000, 8 * kPage, four_pieces, nullptr, sg, 6, &n), SgResult::kTooMany);
    EXPECT_EQ(n, 6u);
    EXPECT_EQ(build_sg_list(0x10000, 8 * kPage, four_pieces, nullptr, sg, 8, &n), SgResult::kOk);
    EXPECT_EQ(n, 8u);
}

TEST(GuestSgList, Errors)
{
    MockMap m;
    m.pages = {{0x10000, 0x8000}};
    vgpu_sg_entry sg[4];
    uint64_t n = 99;
    EXPECT_EQ(build_sg_list(0x10000, 2 * kPage, mock_translate, &m, sg, 4, &n), SgResult::kUnmapped);
    EXPECT_EQ(build_sg_list(0x10000, 0, mock_translate, &m, sg, 4, &n), SgResult::kBadArgument);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(build_sg_list(UINT64_MAX - 10, 20, mock_translate, &m, sg, 4, &n),
              SgResult::kBadArgument);
    EXPECT_EQ(build_sg_list(0x10000, 16, mock_translate, &m, nullptr, 4, &n),
              SgResult::kBadArgument);
    EXPECT_EQ(build_sg_list(0x10000, 16, mock_translate, &m, sg, 0, &n), SgResult::kBadArgument);
    EXPECT_STREQ(sg_result_name(SgResult::kTooMany), "too many entries");
}

TEST(GuestSgList, LargeContiguousTranslationIsOneStep)
{
    // A translation that reports a long contiguous run (identity RAM) is
    // consumed in one call.
    int calls = 0;
    auto identity = [](void* ctx, uint64_t va, uint64_t bytes, SgWriter* sg) {
        ++*static_cast<int*>(ctx);
        return sg_add_piece(sg, va, (1ull << 30) - va, bytes);
    };
    vgpu_sg_entry sg[2];
    uint64_t n;
    ASSERT_EQ(build_sg_list(0x200000, 64ull << 20, identity, &calls, sg, 2, &n), SgResult::kOk);
    EXPECT_EQ(n, 1u);
    EXPECT_EQ(sg[0].len, 64ull << 20);
    EXPECT_EQ(calls, 1);
}

} // namespace
