// The GPU workers of one run that are clients of one MPS server
// (--gpu-share mps), and what a fatal fault in any of them does to all.
//
// Under MPS (Volta and later) a fatal GPU fault in one client is delivered
// to every client of that server, and the server accepts no new client
// until all of them have exited (NVIDIA's MPS documentation, "Error
// Containment"). So the group counts fault generations: a worker belongs to
// the generation current when it was forked; the first fault reported by a
// worker of the current generation starts the next one, and every worker of
// an older generation is affected, whether it faulted, was mid-command or
// was idle. Each VM's WorkerEngine sees that at its next supervision: it
// fails the command in hand (with the fault's driver status), kills its
// worker, and forks a new one only once no worker of an older generation is
// left (may_start()). Faults reported by workers that are already affected
// start nothing new: N clients failing on one fault are one recovery.
//
// The group also says what environment a new worker gets (the MPS client's
// variables) and carries the run's decision when the control daemon dies:
// fall back to contexts (new workers get no MPS variables) or stop (no new
// worker; the VMs' commands fail).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

using EnvList = std::vector<std::pair<std::string, std::string>>;

class MpsServerGroup {
public:
    // `client_env`: what every worker sets before it initialises CUDA
    // (CUDA_MPS_PIPE_DIRECTORY and the per-client limits). `recover_bound`:
    // how long commands wait for the server to take clients again before
    // they fail (below the guest library's own 30 s wait for a command).
    explicit MpsServerGroup(EnvList client_env,
                            std::chrono::milliseconds recover_bound = std::chrono::milliseconds(20'000));

    // The environment for a worker forked now (empty after a fall-back).
    EnvList client_env() const;
    uint64_t generation() const;

    // A worker of `generation` lost its context to a sticky error with
    // driver status `status`. True when this starts a new generation.
    bool report_fault(uint64_t generation, Status status);
    // The status affected VMs' commands in hand fail with.
    Status fault_status() const;
    // Counted faults (generations started by a fault, not by a fall-back).
    uint64_t faults() const;

    // Bookkeeping of live workers, for may_start(): a worker is counted from
    // its fork until it has been reaped.
    void worker_started(uint64_t generation);
    void worker_ended(uint64_t generation);
    // A new worker may be forked: no worker of an older generation lives,
    // and the run was not stopped.
    bool may_start() const;
    // Affected workers are still being replaced, within recover_bound of
    // the fault: waiting commands should wait rather than fail.
    bool recovering() const;

    // The control daemon is gone (or unusable). fall_back: every worker is
    // replaced by one without MPS; stop: no new worker is forked.
    void fall_back_to_contexts(const std::string& why);
    void stop(const std::string& why);
    bool stopped() const;
    // "" while MPS is in use; else why not any more.
    std::string lost_reason() const;

private:
    void next_generation_locked();

    mutable std::mutex mu_;
    EnvList env_;
    std::chrono::milliseconds recover_bound_;
    uint64_t generation_ = 0;
    uint64_t faults_ = 0;
    Status fault_status_ = VGPU_SUCCESS;
    std::chrono::steady_clock::time_point fault_at_{};
    std::map<uint64_t, uint64_t> live_; // generation -> live workers
    bool stopped_ = false;
    std::string lost_reason_;
};

} // namespace kvmgpu::vgpu
