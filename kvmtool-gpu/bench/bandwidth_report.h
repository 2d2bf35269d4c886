// Results of `kvmtool-gpu bench bandwidth`: one record per measurement
// (native or guest), the guest/native ratios, the issue-4 target verdicts,
// and the CSV, JSON and markdown renderings. Pure: no KVM, no GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/bench_line.h"
#include "kvmtool-gpu/bench/bench_report.h"

namespace kvmgpu::bench {

struct BandwidthResult {
    BandwidthKey key;
    uint64_t reps = 0;
    uint64_t event_ns = 0; // CUDA events around the reps
    uint64_t wall_ns = 0;  // host clock (native) or guest TSC (guest)
    unsigned attempts = 1;
    std::string status = "missing"; // ok, not_supported, error:<name>, missing
    bool ok() const { return status == "ok"; }
    double gbps() const;      // bytes * reps / event_ns; 0 unless ok
    double wall_gbps() const; // the same over wall_ns
};

// A guest "BW" line, tagged with the host backing of the VM that printed
// it; a line with source=native (bandwidth_line's) is a native result.
// nullopt when a field is missing or malformed.
std::optional<BandwidthResult> bandwidth_from_line(const BenchLine& line, const std::string& hpages);
// r as a "BW" line that bandwidth_from_line reads back (the native
// baseline's process sends its results so).
std::string bandwidth_line(const BandwidthResult& r);

// The native result of the same direction and size and the given kind
// ("pinned" or "pageable"); nullptr if none is ok.
const BandwidthResult* native_match(const std::vector<BandwidthResult>& all, const BandwidthResult& r,
                                    const std::string& native_kind);
// r's bandwidth over the native one's; nullopt without both.
std::optional<double> ratio_to_native(const std::vector<BandwidthResult>& all, const BandwidthResult& r,
                                      const std::string& native_kind);

// Whether the targets judge pageable copies made with this strategy
// (strategy_is_judged, bandwidth_rules.h: auto, gather, walk).
bool judged_strategy(const std::string& name);

// Issue 4's targets, for guest results at >= 64 MiB: pinned >= 0.99 x
// native pinned; pageable on 4 KiB guest pages with a judged strategy
// >= 0.92 x native pinned.
struct TargetVerdict {
    const BandwidthResult* result;
    double threshold;  // 0.99 or 0.92
    std::optional<double> ratio;
    bool met() const { return ratio && *ratio >= threshold; }
};
constexpr uint64_t kTargetMinBytes = 64ull << 20;
std::vector<TargetVerdict> bandwidth_targets(const std::vector<BandwidthResult>& all);

// Writers. `wall_label` names the guest wall column's meaning.
std::string bandwidth_csv(const std::vector<BandwidthResult>& all);
std::string bandwidth_json(const std::vector<BandwidthResult>& all, const BenchMeta& meta);
std::string bandwidth_markdown(const std::vector<BandwidthResult>& all, const BenchMeta& meta);

} // namespace kvmgpu::bench
