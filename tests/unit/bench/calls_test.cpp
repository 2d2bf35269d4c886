#include <gtest/gtest.h>

#include "kvmtool-gpu/bench/calls_plan.h"
#include "kvmtool-gpu/bench/calls_report.h"

using namespace kvmgpu::bench;

TEST(CallsPlan, OneVmPerDoorbellWithBothBatchingSettings) {
    const auto vms = plan_calls_vms(CallsSweep{});
    ASSERT_EQ(vms.size(), 4u);
    EXPECT_EQ(vms[0].doorbell, kvmgpu::vgpu::DoorbellMode::Adaptive);
    EXPECT_EQ(vms[3].doorbell, kvmgpu::vgpu::DoorbellMode::Poll);
    for (const auto& vm : vms) {
        EXPECT_EQ(vm.expected.size(), 2 * call_metrics().size());
        EXPECT_NE(vm.cmdline.find("batching=off,on"), std::string::npos);
        EXPECT_NE(vm.cmdline.find("n=1000 iters=200 copy_bytes=8 reps=5"), std::string::npos);
    }
    EXPECT_EQ(vms[2].expected[0], (CallsKey{"guest", "ioeventfd", "off", "launch"}));
    EXPECT_EQ(vms[2].expected.back(), (CallsKey{"guest", "ioeventfd", "on", "managed_launch"}));
    CallsSweep s = quick_calls_sweep();
    s.batching_off = false;
    const auto q = plan_calls_vms(s);
    EXPECT_NE(q[0].cmdline.find("n=100 iters=20 copy_bytes=8 reps=1 batching=on"), std::string::npos);
    EXPECT_EQ(q[0].expected.size(), call_metrics().size());
    s.batching_on = false;
    EXPECT_TRUE(plan_calls_vms(s).empty());
    EXPECT_EQ(plan_native_calls().size(), call_metrics().size());
    EXPECT_TRUE(is_async_metric("loop"));
    EXPECT_FALSE(is_async_metric("sync_launch"));
    EXPECT_TRUE(is_async_metric("graph_launch")); // n launches, one synchronize
    EXPECT_FALSE(is_async_metric("alloc_async"));  // a round trip each
}

namespace {
// Five runs, all as fast as the median unless p90_ns says otherwise.
CallsResult make(const char* source, const char* bell, const char* batching, const char* metric, uint64_t calls,
                 uint64_t wall_ns, uint64_t event_ns, uint64_t p90_ns = 0, uint64_t reps = 5) {
    return {{source, bell, batching, metric}, calls, reps, event_ns, wall_ns, wall_ns, p90_ns ? p90_ns : wall_ns,
            1, 1, "ok"};
}
} // namespace

TEST(CallsReport, RatiosExcessAndTargets) {
    std::vector<CallsResult> all = {
        make("native", "-", "-", "launch", 1000, 4100000, 4000000),      // 4.1 us per launch
        make("native", "-", "-", "sync_launch", 200, 1920000, 1900000),  // 9.6 us
        make("guest", "poll", "on", "launch", 1000, 4200000, 4050000),   // 97.6% of the rate: met
        make("guest", "trap", "on", "launch", 1000, 20500000, 20000000), // 20%: missed
        make("guest", "poll", "on", "sync_launch", 200, 2100000, 2000000), // +0.9 us: met
        make("guest", "trap", "off", "launch", 1000, 20500000, 20000000), // not deferred: reported, not judged
        make("guest", "ioeventfd", "on", "sync_launch", 200, 4000000, 3900000), // reported, not a target
    };
    EXPECT_NEAR(all[0].wall_per_call_ns(), 4100, 1e-9);
    EXPECT_NEAR(*rate_ratio(all, all[2], false), 4100.0 / 4200.0, 1e-12);
    EXPECT_NEAR(*rate_ratio(all, all[2], true), 4000.0 / 4050.0, 1e-12);
    EXPECT_NEAR(*round_trip_excess_ns(all, all[4]), 10500 - 9600, 1e-9);
    const auto v = calls_targets(all);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_TRUE(v[0].met);
    EXPECT_TRUE(v[1].judged);
    EXPECT_FALSE(v[1].met);
    EXPECT_TRUE(v[2].met);

    // The median alone is not enough: a 90th percentile past twice the margin misses.
    std::vector<CallsResult> spread = {
        make("native", "-", "-", "sync_launch", 200, 1920000, 1900000),               // 9.6 us
        make("guest", "poll", "on", "sync_launch", 200, 2100000, 2000000, 2300000),   // +0.9, p90 +1.9: met
        make("guest", "adaptive", "on", "sync_launch", 200, 2100000, 2000000, 2400000), // p90 +2.4: missed
        make("native", "-", "-", "launch", 1000, 4100000, 4000000),
        make("guest", "poll", "on", "launch", 1000, 4200000, 4050000, 4700000),       // p90 87%: missed
    };
    const auto s = calls_targets(spread);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_TRUE(s[0].met);
    EXPECT_NEAR(*s[0].p90, 11500 - 9600, 1e-9);
    EXPECT_TRUE(s[1].judged);
    EXPECT_FALSE(s[1].met);
    EXPECT_TRUE(s[2].judged);
    EXPECT_FALSE(s[2].met);
    // Fewer than five runs on either side: reported, not judged.
    std::vector<CallsResult> few = {make("native", "-", "-", "sync_launch", 200, 1920000, 1900000),
                                    make("guest", "poll", "on", "sync_launch", 200, 2100000, 2000000, 0, 3)};
    const auto f = calls_targets(few);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_TRUE(f[0].value);
    EXPECT_FALSE(f[0].judged);
    EXPECT_FALSE(f[0].met);
    EXPECT_NE(calls_markdown(few, BenchMeta{.native_baseline = true}).find("not judged (reps < 5)"), std::string::npos);
    CallsResult failed = make("guest", "poll", "off", "launch", 1000, 0, 0);
    failed.status = "error:CUDA_ERROR_TIMEOUT";
    EXPECT_EQ(failed.wall_per_call_ns(), 0.0);
    EXPECT_FALSE(rate_ratio(all, failed, false));
}

TEST(CallsReport, LineAndRenderings) {
    auto l = parse_bench_line("CALLS metric=loop batching=on calls=100 reps=1 event_ns=1000 wall_ns=5000 "
                              "doorbells=1 waits=1 n=2/10 status=ok",
                              {"CALLS"});
    ASSERT_TRUE(l);
    auto r = calls_from_line(*l, "trap");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->key, (CallsKey{"guest", "trap", "on", "loop"}));
    EXPECT_NEAR(r->wall_per_call_ns(), 50, 1e-9);
    EXPECT_EQ(r->doorbells, 1u);
    l = parse_bench_line("CALLS metric=loop status=ok", {"CALLS"});
    EXPECT_FALSE(calls_from_line(*l, "trap"));

    std::vector<CallsResult> all = {make("native", "-", "-", "launch", 1000, 4100000, 4000000), *r,
                                    CallsResult{{"guest", "poll", "off", "launch"}}};
    BenchMeta meta;
    meta.native_baseline = true;
    const std::string csv = calls_csv(all);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
    EXPECT_NE(csv.find("guest,guest trap batching on,trap,on,loop,100,1,1000,5000,10,50,1,1,,,ok,50,50"), std::string::npos)
        << csv;
    EXPECT_NE(calls_json(all, meta).find("\"rate_vs_native\": null"), std::string::npos);
    const std::string md = calls_markdown(all, meta);
    EXPECT_NE(md.find("| native | 4.10 / 4.00 |"), std::string::npos) << md;
    EXPECT_NE(md.find("| guest poll batching off | missing |"), std::string::npos) << md;
    EXPECT_NE(md.find("| guest trap batching on | loop | 0.05 / 0.05 / 0.05 | - | - | - | rate >= 95% of native | n/a |"),
              std::string::npos)
        << md;
    EXPECT_EQ(us_text(4100), "4.10");
    EXPECT_EQ(us_text(284000), "284");
}
