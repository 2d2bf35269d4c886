// `kvmtool-gpu gpu-server`: serves the vGPUs of VMs on other hosts
// (remote/gpu_server.h) until Ctrl-C or SIGTERM.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu::cli {

int gpu_server_command(const std::vector<std::string>& args);

} // namespace kvmgpu::cli
