// `kvmtool-gpu bench bandwidth`: host<->device bandwidth in guests (pinned
// and pageable buffers, every scatter-gather strategy, 4K/2M/1G host
// backing) against native pinned and pageable copies measured in the same
// run.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu::bench {
int bench_bandwidth_command(const std::vector<std::string>& args);
const char* bench_bandwidth_help();
} // namespace kvmgpu::bench
