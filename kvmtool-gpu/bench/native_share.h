// The native side of `bench share`: the share guest's work done by N
// processes at once, each with its own CUDA context, as N VMs would
// without the VMM. The window is the guests' (share_guests.h): every process
// sets up and runs one unit, then counts its work in memory it shares with
// this process, which reads the counters over one common window and then
// stops them. This process never initialises CUDA (the processes are
// forked first), so a vGPU worker can still be forked after it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kvmtool-gpu/bench/share_guests.h"
#include "kvmtool-gpu/bench/share_stats.h"

namespace kvmgpu::bench {

struct NativeShareWork {
    std::string work;      // "bandwidth" or "compute"
    uint64_t bytes = 0;    // bandwidth: per copy
    unsigned order = 0;    // compute, small: matmul side
    unsigned batch = 1;    // kernels launched per unit before one synchronize (small: several)
    // Set in each process before CUDA starts: an MPS server's client
    // variables (--gpu-share mps), so native processes share it as the VMs do.
    std::vector<std::pair<std::string, std::string>> env = {};
};

// One row per process (side "native"); a row's status says what failed.
// *why gets a line when nothing could be measured (no CUDA build, no GPU).
std::vector<ShareRow> run_native_share(const NativeShareWork& w, unsigned processes, const ShareWindow& window,
                                       std::string* why);

} // namespace kvmgpu::bench
