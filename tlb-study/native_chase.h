// The native baseline: the pointer chase of chase_layout.h in a buffer from
// memmap::Backing on 4 KiB, 2 MiB or 1 GiB pages, run by the harness's own
// thread. These are real hardware latencies of this host (which may itself
// be a VM: see MachineInfo::native_note).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tlb-study/perf_counters.h"
#include "tlb-study/sweep_plan.h"

namespace tlbstudy {

// One working set's result.
struct ChasePoint {
    uint64_t ws = 0;
    uint64_t accesses = 0;       // per repetition
    uint32_t reps = 0;
    double ns_per_access = 0;    // median over the repetitions
    double ns_min = 0;           // fastest repetition
    // Counter totals over all timed repetitions (absent when unavailable);
    // divide by reps * accesses for per-access figures.
    std::vector<CounterValue> counters;
};

struct NativeChaseResult {
    PageSize pages = PageSize::k4K;
    std::string source;          // "anonymous", "hugetlbfs", "MAP_HUGETLB"
    std::string skip, note, error;
    std::vector<ChasePoint> points;
};

struct ChaseParams {
    uint32_t reps = 3;
    uint64_t accesses = 1ull << 17;
    uint64_t seed = 1;
};

using Progress = std::function<void(const std::string& line)>;

// Runs every working set of every run, each run in ONE Backing of its
// buffer_bytes (a working set uses its prefix), all backings held at once so
// that for each working set the page sizes are measured side by side, their
// repetitions interleaved: drifts in a shared host's load then hit 4K and 2M
// alike. Never throws: a failure to get a run's memory ends up in its error.
// counters may be null or unavailable. One result per run, in order.
std::vector<NativeChaseResult> run_native_sweep(const std::vector<NativeRun>& runs, const ChaseParams& params,
                                                PerfCounterSet* counters, const Progress& progress);

// Median of a non-empty sample (the upper middle for even sizes).
double median(std::vector<double> v);

} // namespace tlbstudy
