// bench multigpu's reading of the guest's (and the native side's) lines and
// its tables: the difference of the modes, T, and the seed's 5T model.
#include <gtest/gtest.h>

#include "kvmtool-gpu/bench/multigpu_report.h"

namespace kvmgpu::bench {
namespace {

MultigpuRow row(std::string_view line, const std::string& side) {
    auto l = parse_bench_line(line, {"multigpu:"});
    EXPECT_TRUE(l.has_value()) << line;
    auto r = multigpu_from_line(*l, side);
    EXPECT_TRUE(r.has_value()) << line;
    return r.value_or(MultigpuRow{});
}

TEST(MultigpuReport, ReadsTheGuestsLines) {
    const MultigpuRow t = row("multigpu: order=1024 t_ms=0.250", "guest");
    EXPECT_EQ(t.order, 1024u);
    EXPECT_EQ(t.mode, "t");
    EXPECT_DOUBLE_EQ(t.t_ms, 0.25);
    const MultigpuRow gg = row("multigpu: order=1024 mode=gg reps=3 total_ms=12.500 gather_ms=0.400 check=pass", "guest");
    EXPECT_EQ(gg.mode, "gg");
    EXPECT_DOUBLE_EQ(gg.total_ms, 12.5);
    EXPECT_DOUBLE_EQ(gg.gather_ms, 0.4);
    EXPECT_EQ(gg.check, "pass");
    // Not result lines: banners, the peer-access line, malformed numbers, other modes.
    for (std::string_view bad : {"multigpu: order=1024 mode=xx total_ms=1 gather_ms=1",
                                 "multigpu: order=1024 mode=gg total_ms=abc gather_ms=1",
                                 "multigpu: order=1024 mode=gg total_ms=-1 gather_ms=1", "multigpu: mode=gg t_ms=1",
                                 "multigpu: order=1024 mode=gg gather_ms=1"}) {
        auto l = parse_bench_line(bad, {"multigpu:"});
        ASSERT_TRUE(l.has_value()) << bad;
        EXPECT_FALSE(multigpu_from_line(*l, "guest").has_value()) << bad;
    }
    EXPECT_FALSE(parse_bench_line("multigpu: PASS (64 sampled elements)", {"multigpu:"}).has_value());
}

TEST(MultigpuReport, DifferenceAndTheFiveTModel) {
    std::vector<MultigpuRow> rows = {
        row("multigpu: order=2048 t_ms=2.000", "native"),
        row("multigpu: order=2048 mode=gg reps=3 total_ms=20.000 gather_ms=2.000", "native"),
        row("multigpu: order=2048 mode=gh reps=3 total_ms=30.000 gather_ms=12.000", "native"),
        row("multigpu: order=2048 mode=gg reps=3 total_ms=25.000 gather_ms=2.500 check=pass", "guest"),
    };
    const MultigpuSummary n = summarize(rows, 2048, "native");
    ASSERT_TRUE(n.difference_ms());
    EXPECT_DOUBLE_EQ(*n.difference_ms(), 10.0);
    EXPECT_DOUBLE_EQ(*n.over_5t(), 1.0); // 10 ms = 5 * 2 ms: the seed's model holds
    const MultigpuSummary g = summarize(rows, 2048, "guest");
    EXPECT_FALSE(g.difference_ms()); // no G_H yet
    EXPECT_FALSE(g.over_5t());
    const std::string md = multigpu_markdown(rows, BenchMeta{});
    EXPECT_NE(md.find("| 2048 | native | 20.000 | 30.000 | 10.000 | 2.000 | 1.00 |"), std::string::npos) << md;
    EXPECT_NE(md.find("| 2048 | 80.0% | - |"), std::string::npos) << md; // guest G_G at 20/25 of native speed
    const std::string csv = multigpu_csv(rows);
    EXPECT_EQ(csv.substr(0, csv.find('\n')), "order,side,mode,total_ms,gather_ms,t_ms,check");
    EXPECT_NE(multigpu_json(rows, BenchMeta{}).find("\"mode\": \"gh\""), std::string::npos);
}

} // namespace
} // namespace kvmgpu::bench
