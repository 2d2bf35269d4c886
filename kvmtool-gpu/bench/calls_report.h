// Results of `kvmtool-gpu bench calls`: one record per (mode, metric), the
// per-call times, the guest/native comparisons, the issue-6 target
// verdicts, and the CSV, JSON and markdown renderings. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <tuple>

#include "kvmtool-gpu/bench/bench_line.h"
#include "kvmtool-gpu/bench/bench_report.h"
#include "kvmtool-gpu/bench/calls_plan.h"

namespace kvmgpu::bench {

struct CallsResult {
    CallsKey key;
    uint64_t calls = 0, reps = 0;
    uint64_t event_ns = 0; // CUDA events around the calls (median run)
    uint64_t wall_ns = 0;  // host clock (native) or guest TSC (guest), median run
    uint64_t wall_min_ns = 0, wall_p90_ns = 0; // the fastest run, and the 90th percentile's (nearest rank)
    uint64_t doorbells = 0, waits = 0; // the guest producer's, in the median run
    std::string status = "missing";
    auto wire() { return std::tie(key, calls, reps, event_ns, wall_ns, wall_min_ns, wall_p90_ns, doorbells, waits, status); }
    bool ok() const { return status == "ok"; }
    double wall_per_call_ns() const;  // 0 unless ok
    double event_per_call_ns() const; // 0 unless ok
    double wall_min_per_call_ns() const;
    double wall_p90_per_call_ns() const;
};
// Verdicts are given on runs of at least this many repetitions: the median
// judges, and the 90th percentile must stay within twice the target's margin.
inline constexpr uint64_t kCallsVerdictReps = 5;
// The index of the p-th percentile (nearest rank) among n sorted runs.
inline uint64_t percentile_index(uint64_t n, unsigned p) { return n == 0 ? 0 : (n * p + 99) / 100 - 1; }

// A guest "CALLS" line from the VM with doorbell `doorbell`; a line with
// source=native (the native side's, in logs from before it returned
// structs) is a native result.
std::optional<CallsResult> calls_from_line(const BenchLine& line, const std::string& doorbell);

const CallsResult* native_calls_match(const std::vector<CallsResult>& all, const std::string& metric);
// Asynchronous metrics: the guest's call rate as a fraction of native
// (native per-call time / guest per-call time), by wall clock or events.
std::optional<double> rate_ratio(const std::vector<CallsResult>& all, const CallsResult& r, bool by_events);
// Round trips: guest per-call wall time minus native, in ns.
std::optional<double> round_trip_excess_ns(const std::vector<CallsResult>& all, const CallsResult& r);

// The targets (issue 46): asynchronous launch and loop rate with deferred
// submission (batching on) >= 95% of native; with the adaptive and polling
// doorbells a synchronous round trip <= native + 1.0 us, and after a pause
// <= native + 5 us. Each judged on the median of at least kCallsVerdictReps
// runs, with the 90th percentile within twice the margin (rate >= 90%,
// +2.0 us, +10 us); fewer runs are not judged.
struct CallsVerdict {
    const CallsResult* result;
    std::string target;          // "rate >= 95% of native" or "<= native + 1.0 us"
    std::optional<double> value; // the ratio, or the excess in ns (median)
    std::optional<double> p90;   // the same for the 90th percentile run
    bool judged = false;         // enough runs, a native baseline
    bool met = false;
};
std::vector<CallsVerdict> calls_targets(const std::vector<CallsResult>& all);

std::string calls_csv(const std::vector<CallsResult>& all);
std::string calls_json(const std::vector<CallsResult>& all, const BenchMeta& meta);
std::string calls_markdown(const std::vector<CallsResult>& all, const BenchMeta& meta);

std::string us_text(double ns); // 4100 -> "4.10"

} // namespace kvmgpu::bench
