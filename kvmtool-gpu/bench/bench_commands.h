// The commands of `kvmtool-gpu bench NAME`: each parses its flags
// (util/arg_parser.h) and runs its bench. A command registers itself under
// its row's name in bench_table.h with a BenchCommandRegistration at
// namespace scope in its own file, so main() needs to know none of them,
// and a bench whose code lives beside the VMM (tlb-study/) adds its command
// without depending on the command line (cli/) or the VMM including it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvmgpu::bench {

using BenchCommand = int (*)(const std::vector<std::string>& args);

struct BenchCommandRegistration {
    // Throws std::logic_error for a name that bench_table() lacks or that
    // has a command already (at start-up: a build error, not a user's).
    BenchCommandRegistration(std::string_view name, BenchCommand command);
};

// The command registered under `name` (a table row's name), or nullptr.
BenchCommand find_bench_command(std::string_view name);

} // namespace kvmgpu::bench
