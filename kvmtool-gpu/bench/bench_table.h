// Every bench of `kvmtool-gpu bench NAME`, one row each, in the order
// `kvmtool-gpu --help` lists them: its name, the parts it runs (a native
// side in a child process, native_child.h; a guest side in VMs) and what it
// reports. The CLI finds a bench here and runs the command registered under
// its name (bench/bench_commands.h); each bench's own run is bench/<name>_bench.h
// (tlb: tlb-study/, boot: the CLI's own).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace kvmgpu::bench {

struct BenchEntry {
    std::string_view name;
    std::string_view alias;  // another name it answers to ("" none)
    std::string_view usage;  // its lines in `kvmtool-gpu --help`
    std::string_view native; // what its native side measures ("" none)
    std::string_view guests; // what its guests run
    std::string_view report; // what it writes
};

std::span<const BenchEntry> bench_table();
// By name or alias; nullptr for neither.
const BenchEntry* find_bench(std::string_view name);
// "boot, bandwidth, ... or tlb"
std::string bench_names_text();

} // namespace kvmgpu::bench
