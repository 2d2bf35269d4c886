// Replays a real `bench bandwidth` run (H100, 2026-11-22: --sizes 64M,256M,1G
// --strategies walk,gather --guest-pages 4K --host-pages 2M --reps-min 3)
// through the driver's data path: native lines, then the guest's BW lines one
// by one with the report rewritten after each (as bench_bandwidth_command
// does), then the planned fill. Its markdown was reported to show the last
// Targets row twice; the file did not, and this pins that every row of the
// run appears once, at every rewrite.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "kvmtool-gpu/bench/bandwidth_report.h"

using namespace kvmgpu::bench;

namespace {
struct Row {
    const char *source, *dir, *kind, *strategy;
    uint64_t bytes, reps, event_ns, wall_ns;
    unsigned attempts;
};
// bandwidth.csv of that run, in its order (the 1G htod pageable rows took
// two attempts: the guest measured again after a flushed batch).
const Row kRun[] = {
    {"native", "htod", "pageable", "none", 67108864, 4, 36814465, 36830771, 1},
    {"native", "dtoh", "pageable", "none", 67108864, 4, 22155199, 22171240, 1},
    {"native", "htod", "pageable", "none", 268435456, 3, 110241600, 110257800, 1},
    {"native", "dtoh", "pageable", "none", 268435456, 3, 66093597, 66110716, 1},
    {"native", "htod", "pageable", "none", 1073741824, 3, 447638275, 447658097, 1},
    {"native", "dtoh", "pageable", "none", 1073741824, 3, 279724518, 279744592, 1},
    {"native", "htod", "pinned", "none", 67108864, 4, 4889600, 4901934, 1},
    {"native", "dtoh", "pinned", "none", 67108864, 4, 4875392, 4887395, 1},
    {"native", "htod", "pinned", "none", 268435456, 3, 14682560, 14695575, 1},
    {"native", "dtoh", "pinned", "none", 268435456, 3, 14614112, 14630312, 1},
    {"native", "htod", "pinned", "none", 1073741824, 3, 58656574, 58687680, 1},
    {"native", "dtoh", "pinned", "none", 1073741824, 3, 59267742, 59301754, 1},
    {"guest", "htod", "pinned", "none", 67108864, 4, 4899616, 7457622, 1},
    {"guest", "dtoh", "pinned", "none", 67108864, 4, 4900000, 7484815, 1},
    {"guest", "htod", "pinned", "none", 268435456, 3, 14678784, 17648925, 1},
    {"guest", "dtoh", "pinned", "none", 268435456, 3, 15065760, 18354511, 1},
    {"guest", "htod", "pinned", "none", 1073741824, 3, 58459583, 61472600, 1},
    {"guest", "dtoh", "pinned", "none", 1073741824, 3, 58407391, 61369380, 1},
    {"guest", "htod", "pageable", "gather", 67108864, 4, 6340992, 2011624487, 1},
    {"guest", "dtoh", "pageable", "gather", 67108864, 4, 6004288, 2143667643, 1},
    {"guest", "htod", "pageable", "gather", 268435456, 3, 18478752, 6916160271, 1},
    {"guest", "dtoh", "pageable", "gather", 268435456, 3, 17148512, 5525206233, 1},
    {"guest", "htod", "pageable", "gather", 1073741824, 1, 27566303, 9286849244, 2},
    {"guest", "dtoh", "pageable", "gather", 1073741824, 1, 26940416, 8479790304, 1},
    {"guest", "htod", "pageable", "walk", 67108864, 4, 5411968, 2444637466, 1},
    {"guest", "dtoh", "pageable", "walk", 67108864, 4, 5242752, 2663396372, 1},
    {"guest", "htod", "pageable", "walk", 268435456, 3, 15959520, 6972632541, 1},
    {"guest", "dtoh", "pageable", "walk", 268435456, 3, 15515296, 7298703458, 1},
    {"guest", "htod", "pageable", "walk", 1073741824, 1, 21202463, 9153742443, 2},
    {"guest", "dtoh", "pageable", "walk", 1073741824, 1, 20635201, 9970030908, 1},
};

// The row as the line its producer printed: the native side's format of
// that time, the guest's own format (gpages of its heap, even for pinned) for
// the guest.
std::string line_of(const Row& r) {
    const std::string src = r.source;
    return "BW " + (src == "native" ? std::string("source=native ") : "") + "dir=" + r.dir + " kind=" + r.kind +
           " gpages=" + (src == "native" ? "-" : "4K") + " strategy=" + r.strategy + " bytes=" +
           std::to_string(r.bytes) + " reps=" + std::to_string(r.reps) + " event_ns=" + std::to_string(r.event_ns) +
           " wall_ns=" + std::to_string(r.wall_ns) + " attempts=" + std::to_string(r.attempts) + " status=ok";
}

BandwidthResult parsed(const Row& r) {
    auto l = parse_bench_line(line_of(r), {"BW"});
    EXPECT_TRUE(l);
    auto res = bandwidth_from_line(*l, std::string(r.source) == "native" ? "-" : "2M");
    EXPECT_TRUE(res);
    return *res;
}

// The data rows ("| guest ...") of the Targets section.
std::vector<std::string> target_rows(const std::string& md) {
    std::vector<std::string> rows;
    const size_t at = md.find("### Targets");
    EXPECT_NE(at, std::string::npos);
    size_t pos = md.find('\n', at);
    while (pos != std::string::npos && pos + 1 < md.size()) {
        const size_t end = md.find('\n', pos + 1);
        const std::string line = md.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
        if (line.rfind("###", 0) == 0) break;
        if (line.rfind("| guest", 0) == 0) rows.push_back(line);
        pos = end;
    }
    return rows;
}

void expect_each_row_once(const std::vector<std::string>& rows) {
    std::map<std::string, int> seen;
    for (const auto& r : rows) EXPECT_EQ(++seen[r], 1) << "repeated Targets row: " << r;
}
} // namespace

TEST(BandwidthRunReplay, TargetsListEachMeasurementOnce) {
    BandwidthSweep s;
    s.sizes = {64ull << 20, 256ull << 20, 1ull << 30};
    s.host_pages = {memmap::PageSize::k2M};
    s.guest_pages = {"4K"};
    s.strategies = {"walk", "gather"};
    s.reps_min = 3;
    const auto vms = plan_bandwidth_vms(s);
    ASSERT_EQ(vms.size(), 1u);
    ASSERT_EQ(vms[0].expected.size(), 18u);
    BenchMeta meta;
    meta.native_baseline = true;

    std::vector<BandwidthResult> results, got;
    for (const auto& r : kRun)
        if (std::string(r.source) == "native") results.push_back(parsed(r));
    for (const auto& r : kRun) {
        if (std::string(r.source) != "guest") continue;
        got.push_back(parsed(r));
        std::vector<BandwidthResult> view = results; // the driver's save(got)
        view.insert(view.end(), got.begin(), got.end());
        const auto rows = target_rows(bandwidth_markdown(view, meta));
        EXPECT_EQ(rows.size(), got.size());
        expect_each_row_once(rows);
    }
    ASSERT_TRUE(append_planned(&results, vms[0].expected, got, [](const BandwidthResult& r) { return r.ok(); }));
    ASSERT_EQ(results.size(), std::size(kRun));
    for (size_t i = 0; i < results.size(); ++i) EXPECT_EQ(results[i].key, parsed(kRun[i]).key) << "row " << i;

    const auto rows = target_rows(bandwidth_markdown(results, meta));
    ASSERT_EQ(rows.size(), 18u);
    expect_each_row_once(rows);
    // The last two rows of that run's bandwidth.md, as written there.
    EXPECT_EQ(rows[16], "| guest pageable gp4K hp2M walk | htod | 1G | 50.6 | 54.9 | 92.2% | 92.0% | met |");
    EXPECT_EQ(rows[17], "| guest pageable gp4K hp2M walk | dtoh | 1G | 52.0 | 54.4 | 95.7% | 92.0% | met |");
    // One CSV line per result, as the run's file had.
    const std::string csv = bandwidth_csv(results);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<long>(std::size(kRun)) + 1);
}
