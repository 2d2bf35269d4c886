// ExecutionMode's verdict and the probe's handling of what a guest writes.
#include "kvmtool-gpu/vmm/execution_mode.h"

#include <gtest/gtest.h>

namespace kvmgpu {
namespace {

ExecutionMode measured(uint64_t loops, uint64_t ns, std::optional<uint64_t> emulated) {
    ExecutionMode m;
    m.measured = true;
    m.loop_iterations = loops;
    m.window_ns = ns;
    m.emulated_instructions = emulated;
    return m;
}

TEST(ExecutionMode, KvmsCountDecidesWhenPresent) {
    EXPECT_EQ(measured(1000000, 600000, 1).label(), "native");
    EXPECT_EQ(measured(1000000, 600000, 2000003).label(), "emulated");
    // The count wins over time: a slow but native loop (e.g. a TCG host) is native.
    EXPECT_EQ(measured(1000000, 900000000, 2).label(), "native");
    EXPECT_NE(measured(1000000, 600000, 1).describe().find("1 instructions emulated"), std::string::npos);
}

TEST(ExecutionMode, TimeDecidesWithoutStatistics) {
    EXPECT_EQ(measured(1000000, 700000, std::nullopt).label(), "native");
    EXPECT_EQ(measured(1000000, 2000000000, std::nullopt).label(), "emulated");
    EXPECT_NE(measured(1000, 1000, std::nullopt).describe().find("judged by time"), std::string::npos);
    EXPECT_EQ(ExecutionMode{}.label(), "not measured");
    EXPECT_FALSE(ExecutionMode{}.emulated());
    EXPECT_EQ(measured(0, 5, 0).ns_per_iteration(), 0.0);
}

TEST(ExecutionProbe, OnlyABeginThenAnEndMeasures) {
    ExecutionProbe probe{KvmStatsReader("no statistics here")};
    probe.end(); // without a begin: ignored
    EXPECT_FALSE(probe.mode().measured);
    probe.begin(0); // a zero count opens nothing
    probe.end();
    EXPECT_FALSE(probe.mode().measured);
    probe.begin(5);
    probe.begin(7); // a second begin restarts the window
    probe.end();
    EXPECT_TRUE(probe.mode().measured);
    EXPECT_EQ(probe.mode().loop_iterations, 7u);
    EXPECT_FALSE(probe.mode().emulated_instructions) << "no statistics: no count";
    probe.end(); // a second end changes nothing
    EXPECT_EQ(probe.mode().loop_iterations, 7u);
}

} // namespace
} // namespace kvmgpu
