#include "kvmtool-gpu/bench/bandwidth_report.h"

#include <gtest/gtest.h>

using namespace kvmgpu::bench;

namespace {
constexpr uint64_t k64M = 64ull << 20;

BandwidthResult native(const char* kind, const char* dir, uint64_t bytes, uint64_t ns) {
    return {{"native", dir, kind, "-", "-", "none", bytes}, 1, ns, ns, 1, "ok"};
}
BandwidthResult guest(const char* kind, const char* gp, const char* strategy, const char* dir, uint64_t bytes,
                      uint64_t ns, const char* status = "ok") {
    return {{"guest", dir, kind, gp, "2M", strategy, bytes}, 1, ns, 2 * ns, 1, status};
}
} // namespace

TEST(BandwidthReport, RatesAndRatios) {
    // 64 MiB in 1 ms native pinned = 67.1 GB/s; pageable 8x slower.
    std::vector<BandwidthResult> all = {native("pinned", "htod", k64M, 1000000),
                                        native("pageable", "htod", k64M, 8000000),
                                        guest("pinned", "-", "none", "htod", k64M, 1005000),
                                        guest("pageable", "4K", "gather", "htod", k64M, 1100000)};
    EXPECT_NEAR(all[0].gbps(), 67.108864, 1e-9);
    EXPECT_NEAR(all[2].wall_gbps(), all[2].gbps() / 2, 1e-9);
    EXPECT_NEAR(*ratio_to_native(all, all[2], "pinned"), 1000000.0 / 1005000.0, 1e-12);
    EXPECT_NEAR(*ratio_to_native(all, all[3], "pageable"), 8000000.0 / 1100000.0, 1e-12);
    // No native of that direction: no ratio.
    all.push_back(guest("pinned", "-", "none", "dtoh", k64M, 1000000));
    EXPECT_FALSE(ratio_to_native(all, all.back(), "pinned"));
}

TEST(BandwidthReport, TargetsJudgeOnlyLargeGuestCopies) {
    std::vector<BandwidthResult> all = {native("pinned", "htod", k64M, 1000000),
                                        guest("pinned", "-", "none", "htod", k64M, 1005000),      // 99.5%: met
                                        guest("pageable", "4K", "gather", "htod", k64M, 1100000), // 90.9%: missed
                                        guest("pageable", "2M", "gather", "htod", k64M, 1000000), // not a target
                                        guest("pinned", "-", "none", "htod", 1 << 20, 9000000),   // too small
                                        guest("pageable", "4K", "walk", "htod", k64M, 1050000),   // 95.2%: met
                                        guest("pageable", "4K", "walk", "dtoh", k64M, 0, "not_supported"),
                                        guest("pageable", "4K", "auto", "htod", k64M, 1000000),    // 100%: met
                                        guest("pageable", "4K", "batch", "htod", k64M, 1000000),   // naive: not judged
                                        guest("pageable", "4K", "perchunk", "htod", k64M, 9000000)}; // nor this
    const auto v = bandwidth_targets(all);
    ASSERT_EQ(v.size(), 5u);
    EXPECT_EQ(v[0].threshold, 0.99);
    EXPECT_TRUE(v[0].met());
    EXPECT_EQ(v[1].threshold, 0.92);
    EXPECT_FALSE(v[1].met());
    ASSERT_TRUE(v[1].ratio);
    EXPECT_NEAR(*v[1].ratio, 1 / 1.1, 1e-12);
    EXPECT_EQ(v[2].result->key.strategy, "walk");
    EXPECT_EQ(v[2].threshold, 0.92);
    EXPECT_TRUE(v[2].met());
    EXPECT_FALSE(v[3].ratio); // not supported: no ratio, not met
    EXPECT_FALSE(v[3].met());
    EXPECT_EQ(v[4].result->key.strategy, "auto");
    EXPECT_TRUE(judged_strategy("walk"));
    EXPECT_FALSE(judged_strategy("coalesce"));
    EXPECT_FALSE(judged_strategy("none"));
}

TEST(BandwidthReport, LineToResult) {
    auto l = parse_bench_line("BW dir=dtoh kind=pageable gpages=4K strategy=gather bytes=4096 reps=3 event_ns=300 "
                              "wall_ns=9000 gbps=40.96 attempts=2 n=1/2 status=ok",
                              {"BW"});
    ASSERT_TRUE(l);
    auto r = bandwidth_from_line(*l, "1G");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->key, (BandwidthKey{"guest", "dtoh", "pageable", "4K", "1G", "gather", 4096}));
    EXPECT_EQ(r->reps, 3u);
    EXPECT_EQ(r->attempts, 2u);
    EXPECT_NEAR(r->gbps(), 40.96, 1e-9);
    // Pinned lines carry the heap's page size, which does not apply to them.
    l = parse_bench_line("BW dir=htod kind=pinned gpages=2M strategy=none bytes=1 reps=1 event_ns=0 wall_ns=1 "
                         "status=ok",
                         {"BW"});
    r = bandwidth_from_line(*l, "4K");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->key.gpages, "-");
    EXPECT_FALSE(r->ok()); // ok with no event time is an error
    l = parse_bench_line("BW dir=htod kind=pinned status=ok", {"BW"});
    EXPECT_FALSE(bandwidth_from_line(*l, "4K"));
}

TEST(BandwidthReport, Renderings) {
    BenchMeta meta;
    meta.set("kvm", "KVM (svm)");
    meta.native_baseline = true;
    std::vector<BandwidthResult> all = {native("pinned", "htod", k64M, 1000000),
                                        guest("pinned", "-", "none", "htod", k64M, 1005000),
                                        guest("pageable", "4K", "gather", "htod", k64M, 1100000),
                                        guest("pageable", "4K", "perchunk", "htod", 4096, 0, "missing"),
                                        guest("pageable", "4K", "walk", "htod", k64M, 1050000),
                                        guest("pageable", "4K", "batch", "htod", k64M, 4000000)};
    const std::string csv = bandwidth_csv(all);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);
    EXPECT_EQ(csv.rfind("source,mode,dir,", 0), 0u);
    EXPECT_NE(csv.find("guest pinned hp2M,htod,pinned,-,2M,none,67108864,1,1005000,2010000,"), std::string::npos);
    const std::string json = bandwidth_json(all, meta);
    EXPECT_NE(json.find("\"meta\": {"), std::string::npos);
    EXPECT_NE(json.find("\"vs_native_pageable\": null"), std::string::npos);
    EXPECT_NE(json.find("\"status\": \"missing\""), std::string::npos);
    const std::string md = bandwidth_markdown(all, meta);
    EXPECT_NE(md.find("| native pinned |  |  | 67.1 |"), std::string::npos) << md;
    EXPECT_NE(md.find("| guest pinned hp2M | bypass |  | 66.8 (99.5%) |"), std::string::npos) << md;
    EXPECT_NE(md.find("MISSED by 1.1%"), std::string::npos) << md;
    EXPECT_NE(md.find("| met |"), std::string::npos) << md;
    // walk is judged beside gather; batch, a naive strategy, is only in the GB/s table.
    EXPECT_NE(md.find("| guest pageable gp4K hp2M walk | htod | 64M | 63.9 | 67.1 | 95.2% | 92.0% | met |"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("| guest pageable gp4K hp2M batch | bypass |"), std::string::npos) << md;
    // Neither 2-copy nor 1-copy was measured: no GViM table, no TSC note.
    EXPECT_EQ(md.find("### GViM's modes"), std::string::npos) << md;
    EXPECT_EQ(md.find("guest TSC around the whole transfer"), std::string::npos) << md;
    EXPECT_EQ(md.find("batch | htod |"), std::string::npos) << md;
    EXPECT_NE(md.find("guest pageable gp4K hp2M perchunk htod 4K: missing"), std::string::npos) << md;
    meta.native_baseline = false;
    EXPECT_NE(bandwidth_markdown(all, meta).find("Not judged: no native GPU baseline"), std::string::npos);
}

TEST(BandwidthReport, NumberTexts) {
    EXPECT_EQ(rate_text(123.4), "123");
    EXPECT_EQ(rate_text(54.87), "54.9");
    EXPECT_EQ(rate_text(8.123), "8.12");
    EXPECT_EQ(rate_text(0.0834), "0.083");
    EXPECT_EQ(percent_text(0.9871), "98.7%");
}

// A registered pageable buffer is judged against the walk on the same kind
// of buffer in the same VM: no slower than it.
TEST(BandwidthReport, RegisteredIsJudgedAgainstTheWalk) {
    std::vector<BandwidthResult> all = {native("pinned", "htod", k64M, 1000000),
                                        guest("pageable", "4K", "walk", "htod", k64M, 1080000),      // 92.6%
                                        guest("registered", "4K", "none", "htod", k64M, 1010000),    // 99.0%: met
                                        guest("pageable", "2M", "walk", "htod", k64M, 1050000),      // 95.2%
                                        guest("registered", "2M", "none", "htod", k64M, 1100000)};   // 90.9%: missed
    EXPECT_EQ(all[2].key.mode(), "guest registered gp4K hp2M");
    const auto verdicts = bandwidth_targets(all);
    int judged = 0;
    for (const auto& v : verdicts) {
        if (v.result->key.kind != "registered") continue;
        ++judged;
        if (v.result->key.gpages == "4K") {
            EXPECT_NEAR(v.threshold, 1000000.0 / 1080000.0, 1e-9);
            EXPECT_TRUE(v.met());
        } else {
            EXPECT_NEAR(v.threshold, 1000000.0 / 1050000.0, 1e-9);
            EXPECT_FALSE(v.met());
        }
    }
    EXPECT_EQ(judged, 2);
    // Without a walk row beside it there is nothing to judge it against.
    const std::vector<BandwidthResult> alone = {native("pinned", "htod", k64M, 1000000),
                                                guest("registered", "4K", "none", "htod", k64M, 1010000)};
    EXPECT_TRUE(bandwidth_targets(alone).empty());
}

// twocopy lines are timed by the guest TSC (clock=tsc, event_ns=0): their
// figure is wall_ns's, and the clock survives the native child's line too.
TEST(BandwidthReport, TwoCopyIsTimedByTheGuestTsc) {
    auto l = parse_bench_line("BW dir=htod kind=twocopy gpages=4K strategy=none bytes=1048576 reps=4 event_ns=0 "
                              "wall_ns=1048576 clock=tsc gbps=4.00 attempts=1 trial=1/1 n=1/2 status=ok",
                              {"BW"});
    ASSERT_TRUE(l);
    auto r = bandwidth_from_line(*l, "2M");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->clock, "tsc");
    EXPECT_TRUE(r->ok());
    EXPECT_NEAR(r->gbps(), 4.0, 1e-9);
    EXPECT_EQ(r->key.mode(), "guest twocopy gp4K hp2M");
    EXPECT_EQ(r->key.gvim_mode(), "2-copy");
    // No TSC time: an error, as no event time is for the others.
    l = parse_bench_line("BW dir=htod kind=twocopy gpages=4K strategy=none bytes=1 reps=1 event_ns=0 wall_ns=0 "
                         "clock=tsc status=ok",
                         {"BW"});
    EXPECT_EQ(bandwidth_from_line(*l, "2M")->status, "error:zero_event_time");
    // Lines without clock= (before twocopy) are timed by events; an unknown clock is malformed.
    l = parse_bench_line("BW dir=htod kind=pinned gpages=4K strategy=none bytes=4096 reps=1 event_ns=1024 "
                         "wall_ns=9999 status=ok",
                         {"BW"});
    EXPECT_EQ(bandwidth_from_line(*l, "2M")->clock, "events");
    EXPECT_NEAR(bandwidth_from_line(*l, "2M")->gbps(), 4.0, 1e-9);
    l = parse_bench_line("BW dir=htod kind=pinned gpages=4K strategy=none bytes=4096 reps=1 event_ns=1024 "
                         "wall_ns=9999 clock=sundial status=ok",
                         {"BW"});
    EXPECT_FALSE(bandwidth_from_line(*l, "2M"));
}

// GViM's three modes in one table: a row per direction, VM and size where
// 2-copy or 1-copy was measured, with the bypass ways of the same VM.
TEST(BandwidthReport, GvimModesTable) {
    BenchMeta meta;
    meta.native_baseline = true;
    auto twocopy = [](const char* gp, const char* dir, uint64_t bytes, uint64_t ns) {
        BandwidthResult r = guest("twocopy", gp, "none", dir, bytes, 0);
        r.wall_ns = ns, r.clock = "tsc";
        return r;
    };
    std::vector<BandwidthResult> all = {
        native("pinned", "htod", k64M, 1000000),                    // 67.1 GB/s
        native("pinned", "dtoh", k64M, 1000000),
        guest("pinned", "-", "none", "htod", k64M, 1000000),        // 100%
        guest("pageable", "4K", "walk", "htod", k64M, 1100000),     // 90.9%
        guest("pageable", "4K", "bounce", "htod", k64M, 4000000),   // 25.0%
        guest("registered", "4K", "none", "htod", k64M, 1010000),   // 99.0%
        twocopy("4K", "htod", k64M, 8000000),                       // 12.5%
        guest("pageable", "4K", "auto", "dtoh", k64M, 1250000),     // 80.0%: no walk in dtoh
        twocopy("4K", "dtoh", k64M, 10000000),                      // 10.0%
        guest("pageable", "4K", "walk", "htod", 4096, 1000),        // no 2-copy or 1-copy at 4K: no row
    };
    const std::string md = bandwidth_markdown(all, meta);
    EXPECT_NE(md.find("### GViM's modes (GB/s, % of native pinned)"), std::string::npos) << md;
    EXPECT_NE(md.find("| dir | size | host pages | guest pages | native pinned | 2-copy: twocopy | 1-copy: bounce | "
                      "bypass: pinned | bypass: walk | bypass: registered |"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("| htod | 64M | 2M | 4K | 67.1 | 8.39 (12.5%) | 16.8 (25.0%) | 67.1 (100.0%) | 61.0 (90.9%) | "
                      "66.4 (99.0%) |"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("| dtoh | 64M | 2M | 4K | 67.1 | 6.71 (10.0%) | - | - | 53.7 (80.0%) [auto] | - |"),
              std::string::npos)
        << md;
    EXPECT_EQ(md.find("| htod | 4K |"), std::string::npos) << md;
    EXPECT_LT(md.find("| htod | 64M |"), md.find("| dtoh | 64M |")) << md;
    // The rate tables label every guest row; twocopy's rows say their clock.
    EXPECT_NE(md.find("| guest twocopy gp4K hp2M | 2-copy |  | 8.39 (12.5%) |"), std::string::npos) << md;
    EXPECT_NE(md.find("| guest pageable gp4K hp2M bounce | 1-copy |"), std::string::npos) << md;
    EXPECT_NE(md.find("twocopy (GViM's 2-copy) rows: GB/s from the guest TSC"), std::string::npos) << md;
    // CSV and JSON: the mode and the clock of every row.
    const std::string csv = bandwidth_csv(all);
    EXPECT_NE(csv.find(",ok,1,1,2-copy,tsc\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find(",ok,1,1,1-copy,events\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find(",ok,1,1,native,events\n"), std::string::npos) << csv;
    const std::string json = bandwidth_json(all, meta);
    EXPECT_NE(json.find("\"gvim_mode\": \"2-copy\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"clock\": \"tsc\""), std::string::npos) << json;
    // 2-copy is not a target.
    for (const auto& v : bandwidth_targets(all)) EXPECT_NE(v.result->key.kind, "twocopy");
}
