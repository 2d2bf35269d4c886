#include "kvmtool-gpu/bus/bus.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvmgpu {
namespace {

// Records the last access and answers reads with 0xAB.
struct Probe : BusDevice {
    uint64_t last_offset = ~0ull;
    std::vector<uint8_t> last_write;
    std::string_view name() const override { return "probe"; }
    void read(uint64_t off, std::span<uint8_t> d) override {
        last_offset = off;
        if (!d.empty()) d[0] = 0xAB;
    }
    void write(uint64_t off, std::span<const uint8_t> d) override {
        last_offset = off;
        last_write.assign(d.begin(), d.end());
    }
};

TEST(Bus, RefusesZeroLengthOverflowAndOverlap) {
    Bus bus("mmio");
    auto dev = std::make_shared<Probe>();
    EXPECT_THROW(bus.claim(0x1000, 0, dev), std::invalid_argument);
    EXPECT_THROW(bus.claim(~0ull - 4, 16, dev), std::invalid_argument);
    bus.claim(0x1000, 0x100, dev);
    EXPECT_THROW(bus.claim(0x10FF, 1, dev), std::invalid_argument);  // last byte of the first
    EXPECT_THROW(bus.claim(0x0F00, 0x101, dev), std::invalid_argument); // reaches its first byte
    EXPECT_THROW(bus.claim(0x0000, 0x10000, dev), std::invalid_argument); // covers it
    EXPECT_NO_THROW(bus.claim(0x1100, 0x100, dev));                   // adjacent is fine
    EXPECT_NO_THROW(bus.claim(0x0F00, 0x100, dev));
    EXPECT_NO_THROW(bus.claim(~0ull - 15, 16, dev));                  // ends exactly at 2^64-1
}

TEST(Bus, DispatchesOffsetsAndZeroFillsReads) {
    Bus bus("mmio");
    auto dev = std::make_shared<Probe>();
    bus.claim(0x4000, 0x1000, dev);
    std::vector<uint8_t> buf(8, 0xEE);
    EXPECT_TRUE(bus.read(0x4010, buf));
    EXPECT_EQ(dev->last_offset, 0x10u);
    EXPECT_EQ(buf[0], 0xAB);
    for (size_t i = 1; i < buf.size(); ++i) EXPECT_EQ(buf[i], 0) << i;
    const uint8_t w[4] = {1, 2, 3, 4};
    EXPECT_TRUE(bus.write(0x4ffc, w));
    EXPECT_EQ(dev->last_offset, 0xffcu);
    EXPECT_EQ(dev->last_write, std::vector<uint8_t>({1, 2, 3, 4}));
}

TEST(Bus, UnclaimedAndStraddlingAccessesAreCountedNotDispatched) {
    Bus bus("mmio");
    auto dev = std::make_shared<Probe>();
    bus.claim(0x4000, 0x1000, dev);
    std::vector<uint8_t> buf(8, 0xEE);
    EXPECT_FALSE(bus.read(0x3000, buf));
    for (auto b : buf) EXPECT_EQ(b, 0);
    EXPECT_FALSE(bus.read(0x4ffc, buf)); // 8 bytes from 4 before the end: straddles
    const uint8_t w[8] = {};
    EXPECT_FALSE(bus.write(~0ull - 3, w)); // wraps
    EXPECT_EQ(bus.unclaimed_accesses(), 3u);
    EXPECT_EQ(dev->last_offset, ~0ull);
}

} // namespace
} // namespace kvmgpu
