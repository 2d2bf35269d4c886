// Where a VM's devices live and what lies between them: per pair of
// physical GPUs the driver's peer attributes and the link NVML reports
// (topology_probe.h measures it), and the labels the benches and `run`
// print from it: per pair of guest devices (same GPU / NVLink NV18 / PCIe /
// no peer access / host backend), and for bench multigpu which of the three
// gathered partial products cross a GPU-to-GPU link. Pure: a struct in,
// text out; the probe's result travels between processes as the struct
// itself (wire.h).
#pragma once

#include <optional>
#include <string>
#include <vector>
#include <tuple>


namespace kvmgpu::bench {

enum class LinkKind { Unknown, NvLink, Pcie };

// Two distinct physical GPUs, a < b.
struct GpuPair {
    int a = 0, b = 0;
    bool peer_access = false;    // cuDeviceCanAccessPeer, both ways
    bool native_atomics = false; // CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED
    int perf_rank = -1;          // CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK; -1 unknown
    LinkKind link = LinkKind::Unknown;
    int nvlinks = 0;        // active NVLink links from a straight to b (NVML)
    int switch_nvlinks = 0; // active links from a to NVSwitches, when nvlinks is 0 (HGX boards)
    auto wire() { return std::tie(a, b, peer_access, native_atomics, perf_rank, link, nvlinks, switch_nvlinks); }
};

struct GpuTopology {
    bool host_backend = false; // no GPU: the host backend serves every device
    std::string why;           // host_backend: why; else, when set, why the pairs are missing
    std::string link_source;   // "NVML" or why the link type is unknown ("NVML: ...")
    std::vector<GpuPair> pairs;
    auto wire() { return std::tie(host_backend, why, link_source, pairs); }

    // nullptr for a == b or a pair the probe did not report.
    const GpuPair* pair(int a, int b) const;
};

// "NVLink NV18", "NVLink NV18 through NVSwitch" (nvidia-smi topo -m says
// NV18 for both), "NVLink (through a switch)", "PCIe", "peer access (link
// type unknown)" or "no peer access"; for a pair of distinct GPUs.
std::string link_text(const GpuPair& p);

// One line for guest devices i and j, e.g. "devices 0 and 1: GPUs 0 and 1,
// NVLink NV18 (peer access, native atomics)". gpus[d] is device d's GPU.
std::string device_pair_text(const GpuTopology& t, const std::vector<int>& gpus, int i, int j);
// device_pair_text for every pair of guest devices (none for one device).
std::vector<std::string> device_pair_lines(const GpuTopology& t, const std::vector<int>& gpus);

// Whether a copy between guest devices i and j crosses a GPU-to-GPU link
// (two GPUs with peer access); nullopt when the probe could not tell.
std::optional<bool> crosses_gpu_link(const GpuTopology& t, const std::vector<int>& gpus, int i, int j);

// bench multigpu: roles 1..3 (on devices k % gpus.size()) send their
// partial products to role 0. Per role what its copy crosses; seeds_case
// when every one crosses a GPU-to-GPU link.
struct GatherLabel {
    std::vector<std::string> roles; // "role 1 (device 1, GPU 1): crosses NVLink NV18"
    int crossing = 0;
    bool known = true;
    bool seeds_case = false;
    std::string summary; // one line, e.g. "the seed's case: all 3 remote ..." / "NOT the seed's case: ..."
};
GatherLabel multigpu_gather_label(const GpuTopology& t, const std::vector<int>& gpus);

} // namespace kvmgpu::bench
