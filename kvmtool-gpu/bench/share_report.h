// `bench share`'s result files: one row per member (VM or native process)
// in CSV and JSON, and the markdown tables: per workload and number of
// members, the guests' aggregate against one native process and against as
// many native processes, the per-member spread, Jain's index and the small
// call's latency.
#pragma once

#include <string>
#include <vector>

#include "kvmtool-gpu/bench/bench_report.h"
#include "kvmtool-gpu/bench/share_stats.h"

namespace kvmgpu::bench {

std::string share_csv(const std::vector<ShareRow>& rows);
std::string share_json(const std::vector<ShareRow>& rows, const BenchMeta& meta);
std::string share_markdown(const std::vector<ShareRow>& rows, const BenchMeta& meta);

} // namespace kvmgpu::bench
