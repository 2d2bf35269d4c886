// Results of `kvmtool-gpu bench bandwidth`: one record per measurement
// (native or guest; each trial of a cell is one), the cells they make up
// with their median and spread, the guest/native ratios, the issue-4 target
// verdicts, and the CSV, JSON and markdown renderings. Pure: no KVM, no GPU.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/bench_line.h"
#include "kvmtool-gpu/bench/bench_report.h"
#include "kvmtool-gpu/bench/trial_stats.h"

namespace kvmgpu::bench {

struct BandwidthResult {
    BandwidthKey key;
    uint64_t reps = 0;
    uint64_t event_ns = 0; // CUDA events around the reps
    uint64_t wall_ns = 0;  // host clock (native) or guest TSC (guest)
    unsigned attempts = 1;
    std::string status = "missing"; // ok, not_supported, error:<name>, missing
    // What the figure is timed by: "events" (event_ns), or "tsc" (wall_ns:
    // the twocopy kind, whose guest copies CUDA events would leave out).
    std::string clock = "events";
    auto wire() { return std::tie(key, reps, event_ns, wall_ns, attempts, status, clock); }
    bool ok() const { return status == "ok"; }
    double gbps() const;      // bytes * reps / (event_ns, or wall_ns by the tsc clock); 0 unless ok
    double wall_gbps() const; // the same over wall_ns
};

// A guest "BW" line, tagged with the host backing of the VM that printed
// it; a line with source=native (the native side's, in logs from before
// it returned structs) is a native result. A
// line without trial= (logs from before --trials) is trial 1/1. nullopt
// when a field is missing or malformed.
std::optional<BandwidthResult> bandwidth_from_line(const BenchLine& line, const std::string& hpages);

// The trials of one cell (a BandwidthKey but for its trial), in run order.
struct BandwidthCell {
    std::vector<const BandwidthResult*> trials;
    std::optional<TrialStats> gbps; // over the ok trials; nullopt when none is ok
    const BandwidthKey& key() const { return trials.front()->key; }
};

// A run's results grouped into cells, in order of first appearance. Holds
// pointers into the results, which must outlive it (and not grow).
class BandwidthCells {
public:
    explicit BandwidthCells(const std::vector<BandwidthResult>& all);
    const std::vector<BandwidthCell>& cells() const { return cells_; }
    // The cell of k (its trial ignored); nullptr if none.
    const BandwidthCell* find(const BandwidthKey& k) const;
    // The native cell of k's direction and size, of kind native_kind
    // ("pinned", "pageable"); nullptr unless one of its trials is ok.
    const BandwidthCell* native(const BandwidthKey& k, const std::string& native_kind) const;
    // One trial's GB/s over the native cell's median; nullopt without both.
    std::optional<double> trial_ratio(const BandwidthResult& r, const std::string& native_kind) const;
    // The cell's median GB/s over the native cell's median: what the
    // tables show and the targets judge.
    std::optional<double> cell_ratio(const BandwidthCell& c, const std::string& native_kind) const;
    // The most trials any result was planned with (1 for none).
    unsigned trials() const { return trials_; }

private:
    std::vector<BandwidthCell> cells_;
    std::map<std::tuple<std::string, std::string, uint64_t>, size_t> index_; // mode, dir, bytes
    unsigned trials_ = 1;
};

// BandwidthCells(all).trial_ratio(r, native_kind), for a single look-up.
std::optional<double> ratio_to_native(const std::vector<BandwidthResult>& all, const BandwidthResult& r,
                                      const std::string& native_kind);

// Whether the targets judge pageable copies made with this strategy
// (strategy_is_judged, bandwidth_rules.h: auto, gather, walk).
bool judged_strategy(const std::string& name);

// The bandwidth targets, for guest cells at >= 64 MiB: pinned >= 0.99 x
// native pinned; pageable on 4 KiB guest pages with a judged strategy
// >= 0.92 x native pinned. Judged on medians: one outlier trial cannot
// flip a verdict (with --trials 3 or more).
struct TargetVerdict {
    const BandwidthResult* result; // the cell's first trial: its key names the cell
    double threshold;              // 0.99, 0.92, or (registered) the walk's ratio in the same VM
    std::optional<double> ratio;   // median guest GB/s over median native pinned GB/s
    std::optional<TrialStats> guest, native; // GB/s over the ok trials
    bool met() const { return ratio && *ratio >= threshold; }
};
constexpr uint64_t kTargetMinBytes = 64ull << 20;
std::vector<TargetVerdict> bandwidth_targets(const std::vector<BandwidthResult>& all);

// Writers. CSV and JSON: one row per trial, its vs_native_* ratios over
// the native cell's median, its GViM mode and clock. Markdown: one figure
// per cell, the median, with its spread when there are several trials;
// and GViM's three modes side by side where 2-copy or 1-copy was measured.
std::string bandwidth_csv(const std::vector<BandwidthResult>& all);
std::string bandwidth_json(const std::vector<BandwidthResult>& all, const BenchMeta& meta);
std::string bandwidth_markdown(const std::vector<BandwidthResult>& all, const BenchMeta& meta);

} // namespace kvmgpu::bench
