// `kvmtool-gpu bench multigpu`, run: where the devices live (topology
// probe), the native E = A*B + C*D in a child process, then one VM per
// order running the multigpu guest, and DIR/multigpu.{csv,json,md,png}.
#pragma once

#include <cstdint>
#include <vector>

#include "kvmtool-gpu/bench/bench_plan.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::bench {

struct MultigpuBenchPlan : BenchPlan {
    std::vector<uint64_t> orders; // multiples of 32
    uint64_t reps = 3;            // runs per mode
    uint64_t samples = 64;        // elements of E the guest checks per mode
    VmOptions vm;                 // the guest, RAM, pages, timeout; the cmdline is per order
};

// 0 when every order was measured and the guest's checks passed, else 1.
int run_multigpu_bench(const MultigpuBenchPlan& plan);

} // namespace kvmgpu::bench
