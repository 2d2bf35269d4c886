// The native side of `bench p2p`: the p2p guest's copies (every ordered
// pair of devices, uni- and bidirectional cuMemcpyPeerAsync, one-word
// latency, peer access off and on) done by this process with the CUDA
// Driver API, a context per guest device on the given GPUs, timed as the
// guest times itself (events; the steady clock where the guest uses its
// TSC). Its rows are the guest's "p2p:" lines' (p2p_report.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/p2p_report.h"

namespace kvmgpu::bench {

struct P2pPlan {
    std::vector<uint64_t> sizes;
    unsigned trials = 1;
    uint64_t iters = 1000; // latency copies
    bool access_off = true, access_on = true;
};

// Runs in this process: call it through run_native_on_gpus. Appends its
// samples (side "native") to *out; returns "" or
// why nothing (or not everything) was measured.
std::string native_p2p(const std::vector<int>& gpus, const P2pPlan& plan, std::vector<P2pSample>* out);

} // namespace kvmgpu::bench
