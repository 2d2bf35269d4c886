// `kvmtool-gpu bench p2p`, run: where the devices live (topology probe),
// the native peer copies in a child process, then one VM running the p2p
// guest, the matrices on stdout and DIR/p2p.{csv,json,md}.
#pragma once

#include "kvmtool-gpu/bench/bench_plan.h"
#include "kvmtool-gpu/bench/native_p2p.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::bench {

struct P2pBenchPlan : BenchPlan {
    P2pPlan copies; // sizes, trials, latency copies, peer access off/on
    VmOptions vm;   // the guest with its cmdline (the same plan)
};

// 0 when every copy was measured on the guest's side, else 1.
int run_p2p_bench(const P2pBenchPlan& plan);

} // namespace kvmgpu::bench
