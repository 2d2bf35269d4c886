// What every bench's run takes from its command line, besides its own
// sweep: the CLI (cli/bench_*_command.cpp) parses the flags into a plan,
// and the bench (bench/*_bench.h) runs it.
#pragma once

#include <string>
#include <vector>

#include "kvmtool-gpu/vmm/vgpu_attach.h"

namespace kvmgpu::bench {

struct BenchPlan {
    std::vector<std::string> args;   // the command line, into the result files' meta
    VgpuConfig vgpu;                 // the guests' vGPU
    bool native = true;              // false: --no-native
    std::string out_dir = "bench-results";
    std::string plot_script;         // "": plot_bench.py beside the binary or one folder up
};

} // namespace kvmgpu::bench
