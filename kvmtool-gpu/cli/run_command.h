// `kvmtool-gpu run`: boot one guest and report how it ended.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu::cli {

// Returns the process exit status: 0 guest passed, 1 guest failed or
// faulted, 2 bad usage or set-up error (already printed as one line).
int run_command(const std::vector<std::string>& args);
const char* run_help();

} // namespace kvmgpu::cli
