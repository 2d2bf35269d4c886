// bench share's figures: Jain's index, the per-group summary (failed and
// misbehaving members left out of the figures but not out of the count),
// and the markdown's ratios against one and N native processes.
#include <gtest/gtest.h>

#include "kvmtool-gpu/bench/share_guests.h"
#include "kvmtool-gpu/bench/share_report.h"
#include "kvmtool-gpu/bench/share_stats.h"

namespace kvmgpu::bench {
namespace {

ShareRow row(const char* side, unsigned members, unsigned member, double rate, uint64_t p50 = 10000,
             uint64_t p99 = 20000, const char* status = "ok", const char* note = "") {
    return ShareRow{side, "bandwidth", members, member, rate, p50, p99, status, note};
}

TEST(ShareStats, JainIsOneForEqualSharesAndOneOverNForOneTaker) {
    EXPECT_DOUBLE_EQ(*jain_index({5, 5, 5, 5}), 1.0);
    EXPECT_DOUBLE_EQ(*jain_index({8, 0, 0, 0}), 0.25);
    EXPECT_NEAR(*jain_index({1, 2}), 9.0 / 10.0, 1e-12);
    EXPECT_FALSE(jain_index({}).has_value());
    EXPECT_FALSE(jain_index({0, 0}).has_value());
}

TEST(ShareStats, SummaryOfOneGroup) {
    const std::vector<ShareRow> rows = {row("guest", 2, 0, 10, 1000, 5000), row("guest", 2, 1, 30, 3000, 9000),
                                        row("native", 2, 0, 50), row("guest", 4, 0, 1)};
    const ShareSummary s = summarize_share(rows, "guest", "bandwidth", 2);
    EXPECT_EQ(s.members, 2u);
    EXPECT_TRUE(s.complete());
    EXPECT_DOUBLE_EQ(s.aggregate, 40);
    EXPECT_DOUBLE_EQ(s.min, 10);
    EXPECT_DOUBLE_EQ(s.max, 30);
    EXPECT_NEAR(*s.jain, 1600.0 / (2 * 1000.0), 1e-12);
    EXPECT_EQ(s.lat_p50_ns, 3000u); // upper middle of the members' medians
    EXPECT_EQ(s.lat_p99_ns, 9000u); // the worst member's
    EXPECT_EQ(summarize_share(rows, "guest", "compute", 2).members, 0u);
}

TEST(ShareStats, FailedMemberMakesTheGroupIncompleteAndIntrudersAreNotCounted) {
    const std::vector<ShareRow> rows = {row("guest", 3, 0, 10), row("guest", 3, 1, 0, 0, 0, "timeout"),
                                        row("intruder", 3, 2, 0, 0, 0, "ok", "storm: kicks=5")};
    const ShareSummary s = summarize_share(rows, "guest", "bandwidth", 3);
    EXPECT_EQ(s.members, 2u);
    EXPECT_EQ(s.measured, 1u);
    EXPECT_FALSE(s.complete());
    EXPECT_TRUE(rows[2].ok()); // a note does not make it fail
}

TEST(ShareReport, MarkdownRatiosAgainstOneAndNNativeProcesses) {
    BenchMeta meta;
    meta.set("intruder", "storm");
    const std::vector<ShareRow> rows = {row("native", 1, 0, 50),  row("native", 2, 0, 30), row("native", 2, 1, 30),
                                        row("guest", 2, 0, 24),   row("guest", 2, 1, 24),
                                        row("intruder", 2, 1, 0, 0, 0, "ok", "storm: kicks=7")};
    const std::string md = share_markdown(rows, meta);
    // guests 48 against one native process 50 (96.0%) and two 60 (80.0%).
    EXPECT_NE(md.find("| 2 | 48.0 | 24.0 / 24.0 | 1.000 | 50.0 | 60.0 | 96.0% | 80.0% |"), std::string::npos) << md;
    EXPECT_NE(md.find("bandwidth N=2: ok (storm: kicks=7)"), std::string::npos) << md;
    const std::string csv = share_csv(rows);
    EXPECT_NE(csv.find("guest,bandwidth,2,1,24,GB/s,10000,20000,\"ok\""), std::string::npos) << csv;
}

} // namespace
} // namespace kvmgpu::bench

// SHARE-READY names the word the VMM sets when the window ends; anything
// else about the line leaves the member to its own time bound.
TEST(ShareReady, NamesTheStopWordOrNothing) {
    using kvmgpu::bench::share_ready_stop_word;
    EXPECT_EQ(share_ready_stop_word("SHARE-READY stop=0x1f2a0"), 0x1f2a0u);
    EXPECT_EQ(share_ready_stop_word("SHARE-READY stop=0xffffffffffffffff"), ~uint64_t{0});
    EXPECT_FALSE(share_ready_stop_word("SHARE-READY"));
    EXPECT_FALSE(share_ready_stop_word("SHARE-READY stop=0x"));
    EXPECT_FALSE(share_ready_stop_word("SHARE-READY stop=0x12 more"));
    EXPECT_FALSE(share_ready_stop_word("SHARE-READY stop=0x1ffffffffffffffff")); // past 64 bits
    EXPECT_FALSE(share_ready_stop_word("SHARE-READY stop=12"));
    EXPECT_FALSE(share_ready_stop_word("SHARE: stop=0x12"));
}
