// `kvmtool-gpu bench libraries` (bench cublas), run: the native twin of the
// cublasBench program in a child process, then the program as a guest (and,
// asked, the twin as a guest), the table on stdout and
// DIR/libraries.{csv,json,md}.
#pragma once

#include <string>

#include "kvmtool-gpu/bench/bench_plan.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::bench {

struct LibrariesBenchPlan : BenchPlan {
    VmOptions vm;            // the guest; vm.linux.args are the program's own arguments
    std::string native_path; // the native twin, run with the same arguments
    // Also runs the native twin as a Linux-ABI guest with the host's system
    // as its read-only root, over this guest libcuda.so.1: NVIDIA's own
    // runtime and libcublas in the VM beside the forwarded ones. Empty: not run.
    std::string nvidia_guest_libcuda;
};

// 0 when every guest measurement completed, else 1.
int run_libraries_bench(const LibrariesBenchPlan& plan);

} // namespace kvmgpu::bench
