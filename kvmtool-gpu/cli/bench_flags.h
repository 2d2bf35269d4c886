// What the CLI's bench commands (cli/bench_*_command.cpp, registered by
// name: bench/bench_commands.h) parse alike.
#pragma once

#include <string>
#include <vector>

#include "kvmtool-gpu/bench/bench_plan.h"
#include "kvmtool-gpu/util/arg_parser.h"

namespace kvmgpu::cli {

// What every bench with a vGPU takes alike, into *plan: the command line,
// the vGPU, --no-native, --out and --plot-script.
void set_plan_common(const ArgParser& p, const std::vector<std::string>& args, const VgpuConfig& vgpu,
                     bench::BenchPlan* plan);

} // namespace kvmgpu::cli
