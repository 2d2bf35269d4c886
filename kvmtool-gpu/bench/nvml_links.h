// NVLink between two GPUs as NVML reports it (libnvidia-ml.so.1 through
// dlopen, so nothing links against it): whether NVML says NVLink joins
// them, and how many active links of the first GPU end at the second (the
// "NV18" of nvidia-smi topo -m). GPUs are named by PCI bus id, which the
// CUDA driver gives (cuDeviceGetPCIBusId).
#pragma once

#include <memory>
#include <string>

namespace kvmgpu::bench {

struct NvlinkReport {
    bool nvlink = false; // NVML's P2P status for NVLink is OK
    int links = 0;       // active links from a that end at b
    int switch_links = 0; // active links from a that end at an NVSwitch (HGX boards: every pair's path)
};

class NvmlLinks {
public:
    // nullptr with *why set when NVML is missing or does not initialise.
    static std::unique_ptr<NvmlLinks> open(std::string* why);
    ~NvmlLinks();
    NvmlLinks(const NvmlLinks&) = delete;
    NvmlLinks& operator=(const NvmlLinks&) = delete;

    // False with *why when either bus id is unknown to NVML.
    bool between(const std::string& bus_a, const std::string& bus_b, NvlinkReport* out, std::string* why) const;

private:
    struct Impl;
    explicit NvmlLinks(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace kvmgpu::bench
