// guest::FrameAllocator: alignment, bounds, overflow, mark/release.
#include <gtest/gtest.h>

#include <cstdint>

#include "guest-stub/runtime/frame_alloc.h"

namespace {
using guest::FrameAllocator;
using guest::kPage2M;
using guest::kPage4K;

TEST(GuestFrameAlloc, InitRoundsInward)
{
    FrameAllocator f;
    ASSERT_TRUE(f.init(0x100001, 0x300fff));
    EXPECT_EQ(f.base(), 0x101000u);
    EXPECT_EQ(f.end(), 0x300000u);
    FrameAllocator empty;
    EXPECT_FALSE(empty.init(0x2000, 0x2fff));
    EXPECT_FALSE(empty.init(UINT64_MAX - 10, UINT64_MAX));
    uint64_t p;
    EXPECT_FALSE(empty.alloc(kPage4K, kPage4K, &p)); // uninitialised
}

TEST(GuestFrameAlloc, AlignsAndRoundsSizes)
{
    FrameAllocator f;
    ASSERT_TRUE(f.init(0x201000, 0x1000000));
    uint64_t a, b, c;
    ASSERT_TRUE(f.alloc(1, kPage4K, &a));
    EXPECT_EQ(a, 0x201000u);
    ASSERT_TRUE(f.alloc(kPage4K + 1, kPage4K, &b));
    EXPECT_EQ(b, 0x202000u); // the 1-byte request took a whole page
    ASSERT_TRUE(f.alloc(kPage2M, kPage2M, &c));
    EXPECT_EQ(c, 0x400000u); // next 2 MiB boundary
    EXPECT_EQ(f.used_bytes(), 0x600000u - 0x201000u);
}

TEST(GuestFrameAlloc, RejectsBadArguments)
{
    FrameAllocator f;
    ASSERT_TRUE(f.init(0x100000, 0x200000));
    uint64_t p = 0xdead;
    EXPECT_FALSE(f.alloc(0, kPage4K, &p));
    EXPECT_FALSE(f.alloc(kPage4K, 0, &p));
    EXPECT_FALSE(f.alloc(kPage4K, 3 * kPage4K, &p)); // not a power of two
    EXPECT_FALSE(f.alloc(kPage4K, 512, &p));         // below 4 KiB
    EXPECT_EQ(p, 0xdeadu);
    EXPECT_EQ(f.used_bytes(), 0u);
}

TEST(GuestFrameAlloc, NeverExceedsBounds)
{
    FrameAllocator f;
    ASSERT_TRUE(f.init(0x100000, 0x200000)); // 1 MiB
    uint64_t p;
    EXPECT_FALSE(f.alloc(0x100001, kPage4K, &p));
    EXPECT_FALSE(f.alloc(UINT64_MAX, kPage4K, &p));
    EXPECT_FALSE(f.alloc(UINT64_MAX - kPage4K + 2, kPage4K, &p)); // rounding would wrap
    EXPECT_FALSE(f.alloc(kPage4K, 1ull << 63, &p));               // alignment past the end
    EXPECT_FALSE(f.alloc(kPage4K, kPage2M, &p)); // next 2 MiB boundary is the end
    ASSERT_TRUE(f.alloc(0x100000, kPage4K, &p)); // exactly everything
    EXPECT_EQ(p, 0x100000u);
    EXPECT_EQ(f.free_bytes(), 0u);
    EXPECT_FALSE(f.alloc(1, kPage4K, &p));
    // Many small allocations stop exactly at the end, never overlapping.
    FrameAllocator g;
    ASSERT_TRUE(g.init(0, 64 * kPage4K));
    uint64_t prev_end = 0;
    int n = 0;
    while (g.alloc(kPage4K, kPage4K, &p)) {
        EXPECT_EQ(p, prev_end);
        prev_end = p + kPage4K;
        ++n;
    }
    EXPECT_EQ(n, 64);
    EXPECT_LE(prev_end, g.end());
}

TEST(GuestFrameAlloc, MarkRelease)
{
    FrameAllocator f;
    ASSERT_TRUE(f.init(0x100000, 0x1000000));
    uint64_t p, q;
    ASSERT_TRUE(f.alloc(kPage4K, kPage4K, &p));
    uint64_t m = f.mark();
    ASSERT_TRUE(f.alloc(kPage2M, kPage2M, &q));
    EXPECT_TRUE(f.release(m));
    EXPECT_EQ(f.mark(), m);
    uint64_t r;
    ASSERT_TRUE(f.alloc(kPage4K, kPage4K, &r));
    EXPECT_EQ(r, p + kPage4K);
    EXPECT_FALSE(f.release(f.mark() + kPage4K)); // a mark beyond what is used
    EXPECT_FALSE(f.release(0));                  // below the base
}

} // namespace

namespace {
using guest::FrameAllocator;
using guest::kPage2M;
using guest::kPage4K;

TEST(GuestFrameAlloc, TopAllocationsSurviveRelease)
{
    FrameAllocator f;
    ASSERT_TRUE(f.init(0x100000, 0x1000000));
    uint64_t m = f.mark();
    uint64_t low, top, top2;
    ASSERT_TRUE(f.alloc(kPage4K, kPage4K, &low));
    ASSERT_TRUE(f.alloc_top(3 * kPage4K + 1, kPage4K, &top));
    EXPECT_EQ(top, 0x1000000u - 4 * kPage4K);
    ASSERT_TRUE(f.alloc_top(kPage4K, kPage2M, &top2));
    EXPECT_EQ(top2, 0xE00000u); // aligned down
    EXPECT_EQ(f.end(), 0xE00000u); // 2 MiB taken from the top
    EXPECT_TRUE(f.release(m));
    EXPECT_EQ(f.end(), 0xE00000u); // release leaves the top alone
    uint64_t p;
    EXPECT_FALSE(f.alloc(0xD00001, kPage4K, &p)); // cannot reach into the top
    ASSERT_TRUE(f.alloc(0xD00000, kPage4K, &p));
    EXPECT_FALSE(f.alloc_top(kPage4K, kPage4K, &p)); // bottom and top met
    EXPECT_FALSE(f.alloc_top(0, kPage4K, &p));
}

TEST(GuestFrameAlloc, TopNeverCrossesBottom)
{
    FrameAllocator f;
    ASSERT_TRUE(f.init(0x100000, 0x300000));
    uint64_t p;
    ASSERT_TRUE(f.alloc(0x101000, kPage4K, &p)); // bottom now at 0x201000
    EXPECT_FALSE(f.alloc_top(kPage4K, kPage2M, &p)); // 2 MiB-aligned start 0x200000 is below it
    EXPECT_FALSE(f.alloc_top(UINT64_MAX, kPage4K, &p));
    EXPECT_FALSE(f.alloc_top(0x100000, kPage4K, &p)); // one page too many
    ASSERT_TRUE(f.alloc_top(0xFF000, kPage4K, &p));
    EXPECT_EQ(p, 0x201000u);
    EXPECT_EQ(f.free_bytes(), 0u);
}

} // namespace
