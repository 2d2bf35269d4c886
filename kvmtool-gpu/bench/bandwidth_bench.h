// `kvmtool-gpu bench bandwidth`, run: the native copies in a child process,
// then one VM per host backing x guest page size running the bandwidth
// guest, and DIR/bandwidth.{csv,json,md,png}, rewritten as results come in.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/bench_plan.h"

namespace kvmgpu::bench {

struct BandwidthBenchPlan : BenchPlan {
    BandwidthSweep sweep;
    std::vector<BandwidthVm> vms; // plan_bandwidth_vms(sweep), not empty
    std::string guest_path;
    double timeout_s = 1800;               // per guest run
    std::optional<uint64_t> ram_bytes;     // --mem; else each VM's planned RAM
};

// 0 when every planned guest measurement completed (ok, or not supported by
// the backend) and every data check matched, else 1. Throws for set-up
// failures (no KVM).
int run_bandwidth_bench(const BandwidthBenchPlan& plan);

} // namespace kvmgpu::bench
