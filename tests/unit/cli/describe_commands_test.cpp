// run's vGPU line: how many commands the guest waited for, and on which.
#include <gtest/gtest.h>

#include "kvmtool-gpu/cli/vgpu_report.h"

namespace {

using kvmgpu::VgpuCounters;
using kvmgpu::cli::describe_commands;

TEST(DescribeCommands, NoWaitsGivesCountsOnly) {
    VgpuCounters n;
    n.commands = 12;
    n.errors = 1;
    EXPECT_EQ(describe_commands(n), "12 commands, 1 errors");
}

TEST(DescribeCommands, NamesTheMostWaitedForUpToTop) {
    VgpuCounters n;
    n.commands = 100;
    n.waited = 9;
    n.waited_by_command = {{"CTX_SYNCHRONIZE", 5}, {"MEM_ALLOC", 3}, {"EVENT_QUERY", 1}};
    EXPECT_EQ(describe_commands(n, 2), "100 commands (9 waited for: CTX_SYNCHRONIZE 5, MEM_ALLOC 3, ...), 0 errors");
    EXPECT_EQ(describe_commands(n, 3),
              "100 commands (9 waited for: CTX_SYNCHRONIZE 5, MEM_ALLOC 3, EVENT_QUERY 1), 0 errors");
}

} // namespace
