// bench share --intruder fault: what the faulting VM cost the others, from
// their SHARE: lines (failed calls, time lost, checks).
#include <gtest/gtest.h>

#include "kvmtool-gpu/bench/share_fault.h"

namespace kvmgpu::bench {
namespace {

BenchLine line(std::string_view text) { return *parse_bench_line(text, {"SHARE:"}); }

TEST(ShareFault, UnderContextsNoneLosesItsWork) {
    FaultImpact f;
    f.add(line("SHARE: role=work outages=0 failed=0 lost_ms=0 check=ok"), true);
    f.add(line("SHARE: role=work outages=0 failed=0 lost_ms=0 check=ok"), true);
    EXPECT_EQ(f.affected, 0u);
    EXPECT_EQ(f.text(), "none lost its work; checks passed 2 of 2");
    EXPECT_EQ(member_fault_note(line("SHARE: role=work failed=0 lost_ms=0")), "");
}

TEST(ShareFault, UnderMpsEveryOtherCountsItsFailuresAndTheLongestLoss) {
    FaultImpact f;
    f.add(line("SHARE: role=work outages=1 failed=5 lost_ms=812 check=ok"), true);
    f.add(line("SHARE: role=work outages=1 failed=2 lost_ms=640 check=ok"), true);
    f.add(std::nullopt, false); // ended without its line
    EXPECT_EQ(f.members, 3u);
    EXPECT_EQ(f.affected, 2u);
    EXPECT_EQ(f.failed_calls, 7u);
    EXPECT_EQ(f.lost_ms_max, 812u);
    EXPECT_EQ(f.text(), "2 of 3 lost their work: 7 calls failed, at most 812 ms lost (1 reported nothing); "
                        "checks passed 2 of 3");
    EXPECT_EQ(member_fault_note(line("SHARE: role=work failed=5 lost_ms=812")), "failed=5 lost_ms=812");
}

} // namespace
} // namespace kvmgpu::bench
