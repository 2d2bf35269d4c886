// bench p2p's reading of the guest's (and the native side's) lines and its
// tables: medians over trials, GB/s with both directions counted for bidi,
// µs per copy for latency, the guest's share of native, and "n/a" where the
// devices have no peer access.
#include <gtest/gtest.h>

#include "kvmtool-gpu/bench/p2p_report.h"

namespace kvmgpu::bench {
namespace {

P2pSample sample(std::string_view line, const std::string& side) {
    auto l = parse_bench_line(line, {"p2p:"});
    EXPECT_TRUE(l.has_value()) << line;
    auto s = p2p_from_line(*l, side);
    EXPECT_TRUE(s.has_value()) << line;
    return s.value_or(P2pSample{});
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(P2pReport, ReadsLinesAndRejectsHostileOnes) {
    const P2pSample u = sample("p2p: kind=uni access=off src=0 dst=1 bytes=4096 reps=200 trial=0 event_ns=819200 status=ok",
                               "guest");
    EXPECT_EQ(u.kind, "uni");
    EXPECT_EQ(u.dst, 1);
    EXPECT_EQ(u.count, 200u);
    const P2pSample l = sample(
        "p2p: kind=lat access=on src=1 dst=0 bytes=4 iters=1000 trial=2 event_ns=2000000 wall_ns=9000000 status=ok", "native");
    EXPECT_EQ(l.wall_ns, 9000000u);
    EXPECT_TRUE(sample("p2p: kind=peer src=0 dst=1 can=1", "guest").can);
    for (std::string_view bad : {
             "p2p: kind=uni access=off src=9 dst=1 bytes=4096 reps=2 trial=0 event_ns=1 status=ok",       // device
             "p2p: kind=uni access=off src=0 dst=1 bytes=2147483648 reps=2 trial=0 event_ns=1 status=ok", // > 1 GiB
             "p2p: kind=uni access=off src=0 dst=1 bytes=4096 reps=0 trial=0 event_ns=1 status=ok",       // no reps
             "p2p: kind=uni access=maybe src=0 dst=1 bytes=4096 reps=2 trial=0 event_ns=1 status=ok",
             "p2p: kind=lat access=off src=0 dst=1 bytes=4 iters=10 trial=0 event_ns=1 status=ok", // no wall_ns
             "p2p: kind=zap access=off src=0 dst=1 bytes=4 reps=1 trial=0 event_ns=1 status=ok",
             "p2p: kind=peer src=0 dst=1 can=2"}) {
        auto parsed = parse_bench_line(bad, {"p2p:"});
        ASSERT_TRUE(parsed.has_value()) << bad;
        EXPECT_FALSE(p2p_from_line(*parsed, "guest").has_value()) << bad;
    }
}

TEST(P2pReport, MediansRatesAndTheMatrix) {
    std::vector<P2pSample> s;
    // 1 GiB x 3 copies, three native trials of 10, 11 and 30 ms: the median is 11 ms.
    for (uint64_t ns : {10000000ull, 11000000ull, 30000000ull})
        s.push_back(sample("p2p: kind=uni access=on src=0 dst=1 bytes=1073741824 reps=3 trial=0 event_ns=" +
                               std::to_string(ns) + " status=ok",
                           "native"));
    s.push_back(sample("p2p: kind=uni access=on src=0 dst=1 bytes=1073741824 reps=3 trial=0 event_ns=11220000 status=ok",
                       "guest"));
    s.push_back(sample("p2p: kind=bidi access=on src=0 dst=1 bytes=1073741824 reps=3 trial=0 event_ns=20000000 status=ok",
                       "native"));
    s.push_back(sample(
        "p2p: kind=lat access=off src=0 dst=1 bytes=4 iters=1000 trial=0 event_ns=2000000 wall_ns=10000000 status=ok",
        "native"));
    s.push_back(sample(
        "p2p: kind=lat access=off src=0 dst=1 bytes=4 iters=1000 trial=0 event_ns=2000000 wall_ns=11500000 status=ok",
        "guest"));
    s.push_back(sample("p2p: kind=uni access=off src=1 dst=0 bytes=4096 reps=200 trial=0 event_ns=0 status=error:CUDA_ERROR_INVALID_VALUE",
                       "guest"));
    s.push_back(sample("p2p: kind=peer src=0 dst=1 can=1", "guest"));
    s.push_back(sample("p2p: kind=peer src=1 dst=0 can=0", "guest"));
    const auto cells = p2p_cells(s);
    ASSERT_EQ(cells.size(), 6u);
    const P2pCell& native_uni = cells[0];
    EXPECT_EQ(native_uni.trials, 3u);
    EXPECT_NEAR(native_uni.value, 3.0 * 1073741824 / 11000000, 1e-9); // median trial, bytes per ns = GB/s
    EXPECT_NEAR(cells[2].value, 2 * 3.0 * 1073741824 / 20000000, 1e-9); // bidi counts both directions
    EXPECT_NEAR(cells[3].value, 10.0, 1e-12);                              // µs per round trip
    EXPECT_NEAR(cells[3].gpu_us, 2.0, 1e-12);
    EXPECT_EQ(cells[5].status, "error:CUDA_ERROR_INVALID_VALUE");

    const std::string md = p2p_markdown(cells, s, BenchMeta{});
    EXPECT_TRUE(has(md, "### Unidirectional P2P=Enabled Bandwidth Matrix (GB/s, 1 GiB), guest share of native")) << md;
    EXPECT_TRUE(has(md, "| 0 | - | 98.0% |")) << md; // 11 / 11.22 ms
    EXPECT_TRUE(has(md, "| 1 | n/a | - |")) << md;   // 1 -> 0: no peer access, so nothing with it on
    EXPECT_TRUE(has(md, "| 0 | 1 | off | 10.00 | 11.50 | 1.50 | 2.00 | 2.00 |")) << md;
    EXPECT_TRUE(has(md, "error:CUDA_ERROR_INVALID_VALUE")) << md;
    const std::string csv = p2p_csv(cells);
    EXPECT_EQ(csv.substr(0, csv.find('\n')), "side,kind,access,src,dst,bytes,trials,value,spread,unit,gpu_us,status");
    EXPECT_TRUE(has(p2p_json(cells, BenchMeta{}), "\"unit\": \"us\""));
}

} // namespace
} // namespace kvmgpu::bench
