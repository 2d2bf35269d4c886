// How the VMs of one run share a GPU (--gpu-share): each VM's GPU worker
// with a CUDA context of its own, time-sliced by the GPU (contexts, the
// default), or every worker a client of one MPS server (mps), whose
// kernels can run at once. A GpuShare owns the MPS side for the run: the
// control daemon (started or attached), the group of its clients
// (vgpu::MpsServerGroup, for fault containment), and a watch on the daemon
// that falls back to contexts or stops the VMs' GPU work when it dies.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>

#include "kvmtool-gpu/devices/vgpu_worker/mps_control_daemon.h"
#include "kvmtool-gpu/devices/vgpu_worker/mps_server_group.h"

namespace kvmgpu {

enum class GpuShareMode { Contexts, Mps };
// What a run asked for MPS does when MPS cannot be had, or is lost mid-run.
enum class MpsFallback { Contexts, Stop };
const char* to_string(GpuShareMode m);
const char* to_string(MpsFallback f);

struct GpuShareOptions {
    GpuShareMode mode = GpuShareMode::Contexts;
    std::string mps_pipe;           // attach to the daemon there; "" starts one
    unsigned thread_percentage = 0; // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, 1..100; 0 unset
    uint64_t pinned_mem_limit = 0;  // CUDA_MPS_PINNED_DEVICE_MEM_LIMIT per device, bytes; 0 unset
    MpsFallback fallback = MpsFallback::Stop;
};

// Limits each client gets (1..100 %, at least 1 MiB, whole MiB).
inline constexpr uint64_t kMinMpsMemLimit = 1ull << 20;
// Throws std::invalid_argument naming the bad field.
void validate(const GpuShareOptions& o);
// The per-client limit variables for `o` on the guest's devices `gpus`
// (as the worker sees them: every listed ordinal gets the memory limit).
vgpu::EnvList mps_limit_env(const GpuShareOptions& o, std::span<const int> gpus);

class GpuShare {
public:
    // Contexts: nothing to do. Mps: starts or attaches to the daemon. Where
    // MPS cannot be had: with fallback Stop, throws vgpu::MpsError (one
    // line); with Contexts, prints one warning line and shares by contexts.
    static std::shared_ptr<GpuShare> open(const GpuShareOptions& o, std::span<const int> gpus);
    ~GpuShare(); // ends the watch, stops a daemon started here
    GpuShare(const GpuShare&) = delete;
    GpuShare& operator=(const GpuShare&) = delete;

    GpuShareMode mode() const { return group_ ? GpuShareMode::Mps : GpuShareMode::Contexts; }
    // The workers' group under MPS, else nullptr.
    std::shared_ptr<vgpu::MpsServerGroup> group() const { return group_; }
    // What a native CUDA process needs to be a client of the same server.
    vgpu::EnvList client_env() const { return group_ ? group_->client_env() : vgpu::EnvList{}; }
    // One line for results' metadata and the run's log.
    std::string describe() const;
    // Checks the daemon now (the watch does it every half second): false,
    // and the fall-back applied, once it is gone.
    bool check_daemon();

private:
    GpuShare() = default;
    void watch();

    GpuShareOptions opts_;
    std::unique_ptr<vgpu::MpsControlDaemon> daemon_;
    std::shared_ptr<vgpu::MpsServerGroup> group_;
    std::string fallback_note_; // why mps was asked for but contexts are used
    std::mutex mu_;
    std::atomic<bool> done_{false};
    std::thread watcher_;
};

} // namespace kvmgpu
