// `kvmtool-gpu bench calls`, run: the native calls in a child process, then
// one VM per doorbell running the calls guest (batching off and on), and
// DIR/calls.{csv,json,md,png}, rewritten as results come in.
#pragma once

#include "kvmtool-gpu/bench/bench_plan.h"
#include "kvmtool-gpu/bench/calls_plan.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::bench {

struct CallsBenchPlan : BenchPlan {
    CallsSweep sweep;
    VmOptions vm; // the guest, its RAM, pages and timeout; the cmdline comes from the sweep
};

// 0 when every planned measurement completed (or its backend does not offer
// it), else 1. Throws for set-up failures (no KVM).
int run_calls_bench(const CallsBenchPlan& plan);

} // namespace kvmgpu::bench
