// The native baseline's child process and the lines that carry its results
// back: no GPU needed (the measure functions here are stand-ins).
#include <gtest/gtest.h>

#include <csignal>

#include "kvmtool-gpu/bench/bandwidth_report.h"
#include "kvmtool-gpu/bench/calls_report.h"
#include "kvmtool-gpu/bench/native_cuda.h"

using namespace kvmgpu::bench;

TEST(NativeChild, MetaAndLinesComeBack) {
    BenchMeta meta;
    meta.set("bench", "bandwidth");
    const auto lines = run_native_in_child(&meta, [](BenchMeta* m, const NativeEmit& emit) {
        m->set("gpu", "NVIDIA H100 80GB HBM3");
        m->set("native_baseline", "tabs\tand\nnewlines are flattened");
        m->native_baseline = true;
        emit("BW one");
        emit("BW two");
    });
    EXPECT_EQ(lines, (std::vector<std::string>{"BW one", "BW two"}));
    EXPECT_TRUE(meta.native_baseline);
    EXPECT_EQ(meta.get("bench"), "bandwidth");
    EXPECT_EQ(meta.get("gpu"), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(meta.get("native_baseline"), "tabs and newlines are flattened");
}

TEST(NativeChild, NoBaselineSaysWhy) {
    BenchMeta meta;
    const auto lines = run_native_in_child(&meta, [](BenchMeta* m, const NativeEmit&) {
        m->set("native_baseline", "none (no GPU)");
    });
    EXPECT_TRUE(lines.empty());
    EXPECT_FALSE(meta.native_baseline);
    EXPECT_EQ(meta.get("native_baseline"), "none (no GPU)");
}

TEST(NativeChild, ACrashIsReportedAndDropsItsLines) {
    BenchMeta meta;
    const auto lines = run_native_in_child(&meta, [](BenchMeta* m, const NativeEmit& emit) {
        m->native_baseline = true;
        emit("BW partial");
        std::signal(SIGABRT, SIG_DFL);
        std::abort();
    });
    EXPECT_TRUE(lines.empty());
    EXPECT_FALSE(meta.native_baseline);
    EXPECT_EQ(meta.get("native_baseline"), "none (the native baseline's process died of signal 6)");
}

TEST(NativeChild, ResultLinesRoundTrip) {
    const BandwidthResult b{{"native", "dtoh", "pageable", "-", "-", "none", 1 << 20}, 7, 123, 456, 1, "ok"};
    auto l = parse_bench_line(bandwidth_line(b), {"BW"});
    ASSERT_TRUE(l);
    auto b2 = bandwidth_from_line(*l, "2M");
    ASSERT_TRUE(b2);
    EXPECT_EQ(b2->key, b.key);
    EXPECT_EQ(b2->reps, 7u);
    EXPECT_EQ(b2->event_ns, 123u);
    EXPECT_EQ(b2->wall_ns, 456u);
    EXPECT_EQ(b2->status, "ok");

    const CallsResult c{{"native", "-", "-", "sync_launch"}, 200, 3, 1900000, 1920000, 0, 0, "error:CUDA_ERROR_X"};
    l = parse_bench_line(calls_line(c), {"CALLS"});
    ASSERT_TRUE(l);
    auto c2 = calls_from_line(*l, "poll");
    ASSERT_TRUE(c2);
    EXPECT_EQ(c2->key, c.key);
    EXPECT_EQ(c2->calls, 200u);
    EXPECT_EQ(c2->wall_ns, 1920000u);
    EXPECT_EQ(c2->status, "error:CUDA_ERROR_X");
}
