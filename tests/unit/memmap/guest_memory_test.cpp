// GuestMemory: the region table's refusals and translate()'s edges. Guest
// addresses are hostile, so most tests here are about what must be refused.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <limits>

#include "memmap/guest_memory.h"

using memmap::Backing;
using memmap::GuestMemory;
using memmap::GuestPhysAddr;
using memmap::PageSize;

namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

std::unique_ptr<Backing> backing(uint64_t size) { return Backing::create(PageSize::k4K, size); }

// A: [0, 64K)  B: [64K, 128K) (adjacent to A)  C: [1M, 1M+16K)
class GuestMemoryTest : public ::testing::Test {
protected:
    void SetUp() override {
        mem.add_region(GuestPhysAddr{0x100000}, backing(0x4000)); // out of order on purpose
        mem.add_region(GuestPhysAddr{0x0}, backing(0x10000));
        mem.add_region(GuestPhysAddr{0x10000}, backing(0x10000));
    }
    uint8_t* host_of(size_t region) const { return mem.regions().at(region).backing->data(); }
    GuestMemory mem;
};

TEST_F(GuestMemoryTest, RegionsAreSortedByBaseAndTotalled) {
    ASSERT_EQ(mem.regions().size(), 3u);
    EXPECT_EQ(mem.regions()[0].base.value, 0x0u);
    EXPECT_EQ(mem.regions()[1].base.value, 0x10000u);
    EXPECT_EQ(mem.regions()[2].base.value, 0x100000u);
    EXPECT_EQ(mem.total_bytes(), 0x10000u + 0x10000u + 0x4000u);
}

TEST_F(GuestMemoryTest, TranslatesFirstAndLastByteOfEachRegion) {
    struct Case { uint64_t gpa; size_t region; uint64_t off; };
    const Case cases[] = {{0x0, 0, 0},           {0xffff, 0, 0xffff},    {0x10000, 1, 0},
                          {0x1ffff, 1, 0xffff},  {0x100000, 2, 0},       {0x103fff, 2, 0x3fff}};
    for (const Case& c : cases) {
        const auto s = mem.translate(GuestPhysAddr{c.gpa}, 1);
        ASSERT_TRUE(s.has_value()) << std::hex << c.gpa;
        EXPECT_EQ(s->data(), host_of(c.region) + c.off) << std::hex << c.gpa;
        EXPECT_EQ(s->size(), 1u);
    }
}

TEST_F(GuestMemoryTest, SpanEndingExactlyAtRegionEndIsAcceptedOneByteMoreIsNot) {
    EXPECT_TRUE(mem.translate(GuestPhysAddr{0x0}, 0x10000).has_value());        // whole region
    EXPECT_TRUE(mem.translate(GuestPhysAddr{0x100000 + 0x3000}, 0x1000).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0x100000 + 0x3000}, 0x1001).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0x100000}, 0x4001).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0x104000}, 1).has_value()); // first byte after C
}

TEST_F(GuestMemoryTest, SpanStraddlingTwoAdjacentRegionsIsRefused) {
    // Both bytes are RAM, but in two separate host mappings.
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0xffff}, 2).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0x0}, 0x20000).has_value());
    EXPECT_TRUE(mem.translate(GuestPhysAddr{0xffff}, 1).has_value());
    EXPECT_TRUE(mem.translate(GuestPhysAddr{0x10000}, 1).has_value());
}

TEST_F(GuestMemoryTest, HolesAndZeroLengthAreRefused) {
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0x20000}, 1).has_value());  // gap after B
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0xfffff}, 1).has_value());  // last byte before C
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0xfffff}, 2).has_value());  // starts in the gap, ends in C
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0x0}, 0).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0x1000}, 0).has_value());
}

TEST_F(GuestMemoryTest, WrappingSpansNearTwoToTheSixtyFourAreRefused) {
    EXPECT_FALSE(mem.translate(GuestPhysAddr{kMax}, 1).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{kMax - 7}, 16).has_value());
    // gpa inside a region with a length that wraps back to a small end: a
    // naive `gpa + len <= end` check would accept these.
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0x10}, kMax).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0x100000}, kMax - 0x100000 + 2).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0x8000}, kMax - 0x7fff).has_value());
}

TEST(GuestMemoryHigh, RegionJustBelowTopOfAddressSpace) {
    GuestMemory mem;
    const uint64_t base = kMax - 0x2000 + 1 - 0x1000; // [2^64 - 12K, 2^64 - 4K)
    mem.add_region(GuestPhysAddr{base}, backing(0x2000));
    EXPECT_TRUE(mem.translate(GuestPhysAddr{base}, 0x2000).has_value());
    EXPECT_TRUE(mem.translate(GuestPhysAddr{base + 0x1fff}, 1).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{base + 0x1fff}, 2).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{base + 0x1000}, 0x1000 + 0x1000 + 1).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{base}, kMax).has_value());
    EXPECT_FALSE(mem.translate(GuestPhysAddr{base + 0x100}, kMax - base).has_value()); // end wraps to 0xff
}

// ---- add_region refusals ------------------------------------------------------

void expect_refused(GuestMemory& mem, uint64_t base, std::unique_ptr<Backing> b, const char* what) {
    const size_t before = mem.regions().size();
    try {
        mem.add_region(GuestPhysAddr{base}, std::move(b));
        ADD_FAILURE() << what << ": accepted";
    } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        char hex[24];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(base));
        EXPECT_NE(msg.find(hex), std::string::npos) << what << ": " << msg;
    }
    EXPECT_EQ(mem.regions().size(), before) << what << ": table changed";
}

TEST_F(GuestMemoryTest, OverlappingRegionsAreRefused) {
    expect_refused(mem, 0x0, backing(0x1000), "same base as A");
    expect_refused(mem, 0xf000, backing(0x2000), "tail of A, head of B");
    expect_refused(mem, 0x1f000, backing(0x2000), "starts in B's last page");
    expect_refused(mem, 0xff000, backing(0x2000), "ends inside C");
    expect_refused(mem, 0xf0000, backing(0x20000), "swallows C");
    expect_refused(mem, 0x103000, backing(0x1000), "inside C");
    EXPECT_EQ(mem.total_bytes(), 0x24000u);
}

TEST_F(GuestMemoryTest, RegionsTouchingOnBothSidesAreAccepted) {
    mem.add_region(GuestPhysAddr{0x20000}, backing(0x1000));  // right after B
    mem.add_region(GuestPhysAddr{0xff000}, backing(0x1000));  // right before C
    mem.add_region(GuestPhysAddr{0x21000}, backing(0xde000)); // fills the gap exactly
    EXPECT_EQ(mem.regions().size(), 6u);
    for (size_t i = 1; i < mem.regions().size(); ++i)
        EXPECT_EQ(mem.regions()[i - 1].base.value + mem.regions()[i - 1].size(), mem.regions()[i].base.value);
}

TEST(GuestMemoryAdd, ZeroOverflowAndMisalignedRegionsAreRefused) {
    GuestMemory mem;
    expect_refused(mem, 0x0, nullptr, "no backing");
    // [2^64 - 4K, 2^64): the end is not representable.
    expect_refused(mem, kMax - 0xfff, backing(0x1000), "ends at 2^64");
    expect_refused(mem, kMax - 0xfff, backing(0x2000), "wraps");
    expect_refused(mem, 0x800, backing(0x1000), "not page aligned");
    expect_refused(mem, 0x1001, backing(0x1000), "not page aligned");
    EXPECT_TRUE(mem.regions().empty());
    EXPECT_EQ(mem.total_bytes(), 0u);
    EXPECT_FALSE(mem.translate(GuestPhysAddr{0}, 1).has_value()); // empty table
}

// ---- read / write ------------------------------------------------------------------

TEST_F(GuestMemoryTest, WriteThenReadRoundTripsAndLandsInTheRightBacking) {
    std::array<uint8_t, 300> out{}, in{};
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 13 + 1);
    ASSERT_TRUE(mem.write(GuestPhysAddr{0x10000 + 0x1234}, out.data(), out.size()));
    EXPECT_EQ(std::memcmp(host_of(1) + 0x1234, out.data(), out.size()), 0);
    ASSERT_TRUE(mem.read(GuestPhysAddr{0x10000 + 0x1234}, in.data(), in.size()));
    EXPECT_EQ(in, out);
    EXPECT_EQ(host_of(0)[0x1234], 0) << "wrote into region A";

    const uint64_t v = 0x1122334455667788ull;
    ASSERT_TRUE(mem.write_obj(GuestPhysAddr{0x103ff8}, v)); // last 8 bytes of C
    EXPECT_EQ(mem.read_obj<uint64_t>(GuestPhysAddr{0x103ff8}), v);
    EXPECT_FALSE(mem.read_obj<uint64_t>(GuestPhysAddr{0x103ff9}).has_value());
}

TEST_F(GuestMemoryTest, RefusedWriteChangesNothing) {
    std::array<uint8_t, 16> junk;
    junk.fill(0xee);
    EXPECT_FALSE(mem.write(GuestPhysAddr{0xfff8}, junk.data(), junk.size())); // straddles A|B
    EXPECT_FALSE(mem.write(GuestPhysAddr{0x103ff8}, junk.data(), junk.size())); // runs off C
    EXPECT_FALSE(mem.write(GuestPhysAddr{0x0}, junk.data(), 0));
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(host_of(0)[0xfff8 + i], 0);
        EXPECT_EQ(host_of(2)[0x3ff8 + i], 0);
    }
    std::array<uint8_t, 16> in;
    in.fill(0x11);
    EXPECT_FALSE(mem.read(GuestPhysAddr{0x1fff8}, in.data(), in.size()));
    EXPECT_EQ(in[0], 0x11);
}

} // namespace
