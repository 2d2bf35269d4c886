// `bench multigpu`'s results: the multigpu guest's lines (and the native
// side's, which prints the same) as rows, and the tables: per order and
// side, the time of each gathering mode, their difference, T (one partial
// product copied device to host) and the difference over 5T, the seed's
// model of what staging through the host adds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <tuple>

#include "kvmtool-gpu/bench/bench_line.h"
#include "kvmtool-gpu/bench/bench_report.h"

namespace kvmgpu::bench {

struct MultigpuRow {
    uint64_t order = 0;
    std::string side; // "native" or "guest"
    std::string mode; // "gg", "gh", or "t" (the row holds T)
    double total_ms = 0, gather_ms = 0, t_ms = 0;
    std::string check; // the guest's own check ("pass"/"FAIL"); "" for native and T rows
    auto wire() { return std::tie(order, side, mode, total_ms, gather_ms, t_ms, check); }
};

// A "multigpu:" line as a row of `side`; nullopt for any other line.
std::optional<MultigpuRow> multigpu_from_line(const BenchLine& l, const std::string& side);

// One order and side, read off the rows: nullopt for what is missing.
struct MultigpuSummary {
    std::optional<double> gg_ms, gh_ms, gg_gather_ms, gh_gather_ms, t_ms;
    std::optional<double> difference_ms() const; // gh - gg (totals)
    std::optional<double> over_5t() const;       // (gh - gg) / 5T
};
MultigpuSummary summarize(const std::vector<MultigpuRow>& rows, uint64_t order, const std::string& side);

std::string multigpu_csv(const std::vector<MultigpuRow>& rows);
std::string multigpu_json(const std::vector<MultigpuRow>& rows, const BenchMeta& meta);
std::string multigpu_markdown(const std::vector<MultigpuRow>& rows, const BenchMeta& meta);

} // namespace kvmgpu::bench
