// `kvmtool-gpu bench boot`: VM creation -> first guest instruction, and ->
// guest exit, repeated; prints median / min / p90 and optional CSV.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu::cli {
int bench_boot_command(const std::vector<std::string>& args);
const char* bench_boot_help();
} // namespace kvmgpu::cli
