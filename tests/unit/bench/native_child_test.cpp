// The one fork-and-collect helper of the benches' native sides: structs come
// back as they were, a crash or a hang is reported in one reason, and a
// hung child is killed at its deadline. No GPU needed (the bodies here are
// stand-ins).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <optional>
#include <stdexcept>
#include <thread>

#include "kvmtool-gpu/bench/bandwidth_report.h"
#include "kvmtool-gpu/bench/calls_report.h"
#include "kvmtool-gpu/bench/gpu_topology.h"
#include "kvmtool-gpu/bench/native_child.h"

using namespace kvmgpu::bench;

TEST(NativeChild, RowsAndMetaComeBackAsTheyWere) {
    BenchMeta meta;
    meta.set("bench", "bandwidth");
    const BandwidthResult b{{"native", "dtoh", "pageable", "-", "-", "none", 1 << 20, 2, 3}, 7, 123, 456, 2,
                            "status with spaces\tand\ttabs", "tsc"};
    const auto rows = native_rows_in_child<BandwidthResult>(&meta, 30, [&](BenchMeta* m) {
        m->set("gpu", "NVIDIA H100 80GB HBM3");
        m->set("native_baseline", "tabs\tand\nnewlines stay");
        m->native_baseline = true;
        return std::vector<BandwidthResult>{b, b};
    });
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[1].key, b.key);
    EXPECT_EQ(rows[1].reps, 7u);
    EXPECT_EQ(rows[1].event_ns, 123u);
    EXPECT_EQ(rows[1].wall_ns, 456u);
    EXPECT_EQ(rows[1].attempts, 2u);
    EXPECT_EQ(rows[1].status, b.status);
    EXPECT_EQ(rows[1].clock, "tsc");
    EXPECT_TRUE(meta.native_baseline);
    EXPECT_EQ(meta.get("bench"), "bandwidth");
    EXPECT_EQ(meta.get("gpu"), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(meta.get("native_baseline"), "tabs\tand\nnewlines stay");
}

TEST(NativeChild, EveryCallsFieldTravels) {
    const CallsResult c{{"native", "-", "-", "sync_launch"}, 200, 3, 1900000, 1920000, 1910000, 1990000, 5, 6,
                        "error:CUDA_ERROR_X"};
    std::string why;
    const auto back = run_in_child<CallsResult>("test", 30, [&] { return c; }, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->key, c.key);
    EXPECT_EQ(back->calls, 200u);
    EXPECT_EQ(back->reps, 3u);
    EXPECT_EQ(back->event_ns, 1900000u);
    EXPECT_EQ(back->wall_ns, 1920000u);
    EXPECT_EQ(back->wall_min_ns, 1910000u);
    EXPECT_EQ(back->wall_p90_ns, 1990000u);
    EXPECT_EQ(back->doorbells, 5u);
    EXPECT_EQ(back->waits, 6u);
    EXPECT_EQ(back->status, "error:CUDA_ERROR_X");
}

TEST(NativeChild, TopologyTravels) {
    GpuTopology t;
    t.link_source = "NVML: 100% = odd";
    t.pairs.push_back({.a = 0, .b = 1, .peer_access = true, .native_atomics = true, .perf_rank = 0,
                       .link = LinkKind::NvLink, .nvlinks = 18});
    t.pairs.push_back({.a = 0, .b = 2, .peer_access = false, .perf_rank = -1, .link = LinkKind::Pcie});
    std::string why;
    const auto back = run_in_child<GpuTopology>("test", 30, [&] { return t; }, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->link_source, t.link_source);
    ASSERT_EQ(back->pairs.size(), 2u);
    EXPECT_EQ(back->pairs[0].nvlinks, 18);
    EXPECT_EQ(back->pairs[0].link, LinkKind::NvLink);
    EXPECT_TRUE(back->pairs[0].native_atomics);
    EXPECT_EQ(back->pairs[1].perf_rank, -1);
    EXPECT_EQ(back->pairs[1].link, LinkKind::Pcie);
}

TEST(NativeChild, NoBaselineSaysWhy) {
    BenchMeta meta;
    const auto rows = native_rows_in_child<CallsResult>(&meta, 30, [](BenchMeta* m) {
        m->set("native_baseline", "none (no GPU)");
        return std::vector<CallsResult>{};
    });
    EXPECT_TRUE(rows.empty());
    EXPECT_FALSE(meta.native_baseline);
    EXPECT_EQ(meta.get("native_baseline"), "none (no GPU)");
}

TEST(NativeChild, ACrashIsReportedAndDropsItsRows) {
    BenchMeta meta;
    const auto rows = native_rows_in_child<CallsResult>(&meta, 30, [](BenchMeta* m) {
        m->native_baseline = true;
        std::signal(SIGABRT, SIG_DFL);
        std::abort();
        return std::vector<CallsResult>(1);
    });
    EXPECT_TRUE(rows.empty());
    EXPECT_FALSE(meta.native_baseline);
    EXPECT_EQ(meta.get("native_baseline"), "none (the native baseline's process died of signal 6)");
}

TEST(NativeChild, AnExceptionEndsOnlyTheChild) {
    std::string why;
    std::optional<CallsResult> got;
    try {
        got = run_in_child<CallsResult>("test", 30, []() -> CallsResult { throw std::runtime_error("no GPU"); }, &why);
    } catch (const std::runtime_error&) {
        _exit(42); // only a child that unwound out of its body gets here: the parent then reads status 42
    }
    EXPECT_FALSE(got);
    EXPECT_EQ(why, "test exited with status 1");
}

TEST(NativeChild, AHungChildIsKilledAtItsDeadline) {
    BenchMeta meta;
    const auto t0 = std::chrono::steady_clock::now();
    const auto rows = native_rows_in_child<CallsResult>(&meta, 0.5, [](BenchMeta*) {
        for (;;) pause();
        return std::vector<CallsResult>{};
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(rows.empty());
    EXPECT_GE(s, 0.5);
    EXPECT_LT(s, 10);
    EXPECT_EQ(meta.get("native_baseline"), "none (the native baseline's process ran past its deadline and was killed)");
}

TEST(NativeChild, TruncatedBytesAreRefused) {
    kvmgpu::bench::wire::Writer w;
    w.put(CallsResult{{"native", "-", "-", "launch"}, 1, 2, 3, 4, 5, 6, 7, 8, "ok"});
    const std::string bytes = w.take();
    for (size_t cut : {size_t{0}, size_t{7}, bytes.size() - 1}) {
        CallsResult r;
        kvmgpu::bench::wire::Reader in(std::string_view(bytes).substr(0, cut));
        in.get(r);
        EXPECT_FALSE(in.ok()) << cut;
    }
    std::string huge = bytes;
    huge[0] = '\xff'; // the first string's length
    CallsResult r;
    kvmgpu::bench::wire::Reader in(huge);
    in.get(r);
    EXPECT_FALSE(in.ok());
}
