// `kvmtool-gpu bench share`, run: for each work and N, N native processes
// at once (native_share.h), then N VMs at once running the share guest
// (share_guests.h), each counted over one common window, and
// DIR/share.{csv,json,md,png}, rewritten after each group.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/bench_plan.h"
#include "kvmtool-gpu/bench/share_guests.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::bench {

// The small mix's unit: `batch` matmuls of side `order`, few blocks each
// (most SMs idle: the case MPS is for), then one synchronize.
struct SmallWork {
    unsigned order = 128, batch = 16;
    unsigned blocks() const { return ((order + 15) / 16) * ((order + 15) / 16); }
};

struct ShareBenchPlan : BenchPlan {
    std::vector<unsigned> counts;   // numbers of VMs (and processes) at once, sorted
    std::vector<std::string> works; // "bandwidth", "compute", "small"
    uint64_t size = 32ull << 20;    // bandwidth: bytes per copy
    uint64_t order = 2048;          // compute: matmul side
    SmallWork small;                // small: its unit
    ShareWindow window;
    uint64_t guest_seconds = 0;     // how long each guest works
    std::string intruder;           // "" or the last VM's role in groups of 2 or more
    VmOptions vm;                   // every VM's options; the cmdline is per group
};

// 0 when every member of every group was measured and every guest's checks
// passed, else 1. Throws for set-up failures (no KVM, a VM that cannot be
// set up).
int run_share_bench(const ShareBenchPlan& plan);

} // namespace kvmgpu::bench
