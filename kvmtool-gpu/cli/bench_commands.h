// The commands of `kvmtool-gpu bench NAME`: each parses its flags and runs
// its bench. A command registers itself under its row's name in
// bench/bench_table.h with a BenchCommandRegistration at namespace scope in
// its own file, so main() needs to know none of them, and a bench whose code
// lives above the VMM (tlb-study/) adds its command without the VMM
// including it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kvmtool-gpu/bench/bench_plan.h"
#include "kvmtool-gpu/cli/arg_parser.h"

namespace kvmgpu::cli {

using BenchCommand = int (*)(const std::vector<std::string>& args);

struct BenchCommandRegistration {
    // Throws std::logic_error for a name that bench_table() lacks or that
    // has a command already (at start-up: a build error, not a user's).
    BenchCommandRegistration(std::string_view name, BenchCommand command);
};

// The command registered under `name` (a table row's name), or nullptr.
BenchCommand find_bench_command(std::string_view name);

// What every bench with a vGPU takes alike, into *plan: the command line,
// the vGPU, --no-native, --out and --plot-script.
void set_plan_common(const ArgParser& p, const std::vector<std::string>& args, const VgpuConfig& vgpu,
                     bench::BenchPlan* plan);

} // namespace kvmgpu::cli
