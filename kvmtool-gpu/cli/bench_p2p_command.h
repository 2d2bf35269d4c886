// `kvmtool-gpu bench p2p`: copies between a VM's devices (every ordered
// pair, uni- and bidirectional, one-word latency, peer access off and on),
// natively and in a guest in the same run, as p2pBandwidthLatencyTest's
// matrices with the guest's share of native.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu::bench {
int bench_p2p_command(const std::vector<std::string>& args);
const char* bench_p2p_help();
} // namespace kvmgpu::bench
