// `kvmtool-gpu bench calls`: what a virtual CUDA call costs, per doorbell
// (trap, ioeventfd, poll) and with batching (deferred submission) off and
// on, against the same calls made natively in the same run.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu::bench {
int bench_calls_command(const std::vector<std::string>& args);
const char* bench_calls_help();
} // namespace kvmgpu::bench
