// `kvmtool-gpu bench share`: N VMs on one GPU at once (N = 1, 2, 4, 8 by
// default) running the same work, a bandwidth mix or a compute mix, against
// one native process and N native processes in the same run: aggregate
// throughput, each VM's share and Jain's index, and the latency of a small
// call while the others run.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu::bench {
int bench_share_command(const std::vector<std::string>& args);
const char* bench_share_help();
} // namespace kvmgpu::bench
