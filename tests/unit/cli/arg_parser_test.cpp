#include "kvmtool-gpu/util/arg_parser.h"

#include <gtest/gtest.h>

#include "kvmtool-gpu/vmm/vcpu_watchdog.h"

namespace kvmgpu {
namespace {

TEST(ArgParser, ValuesFlagsAndErrors) {
    ArgParser p({"mem", "guest"}, {"prefault"});
    p.parse({"--mem", "512M", "--guest=hello", "--prefault"});
    EXPECT_EQ(p.get("mem"), "512M");
    EXPECT_EQ(p.get("guest"), "hello");
    EXPECT_TRUE(p.has("prefault"));
    EXPECT_FALSE(p.has("timeout"));
    ArgParser q({"mem"}, {"prefault"});
    EXPECT_THROW(q.parse({"--bogus"}), UsageError);
    EXPECT_THROW(q.parse({"--mem"}), UsageError);
    EXPECT_THROW(q.parse({"--prefault=1"}), UsageError);
    EXPECT_THROW(q.parse({"stray"}), UsageError);
}

TEST(ArgParser, Sizes) {
    EXPECT_EQ(parse_size("512M", "--mem"), 512ull << 20);
    EXPECT_EQ(parse_size("2g", "--mem"), 2ull << 30);
    EXPECT_EQ(parse_size("4096", "--mem"), 4096u);
    EXPECT_EQ(parse_size("64K", "--mem"), 65536u);
    EXPECT_THROW(parse_size("", "--mem"), UsageError);
    EXPECT_THROW(parse_size("0", "--mem"), UsageError);
    EXPECT_THROW(parse_size("-1M", "--mem"), UsageError);
    EXPECT_THROW(parse_size("12Q", "--mem"), UsageError);
    EXPECT_THROW(parse_size("99999999999999999999", "--mem"), UsageError);
    EXPECT_THROW(parse_size("17179869184G", "--mem"), UsageError); // overflows on the shift
    EXPECT_EQ(parse_size_list("4K,64K,,1M,1G", "--sizes"), (std::vector<uint64_t>{4096, 65536, 1 << 20, 1ull << 30}));
    EXPECT_THROW(parse_size_list("", "--sizes"), UsageError);
    EXPECT_THROW(parse_size_list(",", "--sizes"), UsageError);
    EXPECT_THROW(parse_size_list("4K,zz", "--sizes"), UsageError);
    EXPECT_THROW(parse_size_list("4K,0", "--sizes"), UsageError);
}

TEST(ArgParser, Seconds) {
    EXPECT_DOUBLE_EQ(parse_seconds("2.5", "--timeout", VcpuWatchdog::kMaxTimeoutS), 2.5);
    EXPECT_THROW(parse_seconds("-1", "--timeout", VcpuWatchdog::kMaxTimeoutS), UsageError);
    EXPECT_THROW(parse_seconds("nan", "--timeout", VcpuWatchdog::kMaxTimeoutS), UsageError);
    EXPECT_THROW(parse_seconds("3s", "--timeout", VcpuWatchdog::kMaxTimeoutS), UsageError);
    // The watchdog's deadline overflowed past ~9.3e18 s and the VMM hung.
    EXPECT_THROW(parse_seconds("1e19", "--timeout", VcpuWatchdog::kMaxTimeoutS), UsageError);
    EXPECT_THROW(parse_seconds("inf", "--timeout", VcpuWatchdog::kMaxTimeoutS), UsageError);
    EXPECT_DOUBLE_EQ(parse_seconds("1e9", "--timeout", VcpuWatchdog::kMaxTimeoutS), 1e9);
}

} // namespace
} // namespace kvmgpu
