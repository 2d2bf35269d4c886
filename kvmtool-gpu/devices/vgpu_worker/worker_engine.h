// The command engine in a GPU worker process of its own (gpu_worker.h): the
// worker runs the same InlineEngine the VMM would, over the CUDA backend, so
// a GPU fault that poisons a process's CUDA (driver 580: after an illegal
// address even cuCtxCreate fails) costs one worker, not the VMM.
//
// The worker owns the ring, as a vhost-user backend owns its vring: from
// ENABLE on it reads the commands in guest RAM and completes them there,
// whatever the doorbell; the kick eventfd (the doorbell's target, KVM's
// ioeventfd or the trapped write's) is handed to it with its VM's memory,
// and the worker sleeps on it. No command crosses the process boundary. Messages
// carry only the worker's life and the VM's control requests (Start,
// Attach, Reset, Quit), over a WorkerChannel (shared memory, spin then
// futex); each also writes the kick eventfd, so a sleeping worker sees it.
//
// Workers start from the worker zygote (worker_zygote.h) with a recipe
// (worker_recipe.h): guest RAM's descriptors (memmap::Backing::fd), which the
// worker maps itself and so translates guest addresses itself, the channel,
// the counters and the kick eventfd.
//
// The VMM supervises (supervise(), from the device's executor about every
// kSupervisePeriod): a worker that died, or made no progress on a waiting
// command within the call bound, is killed (SIGKILL, bounded reap) and
// replaced; the command in hand completes with kWorkerDied /
// kWorkerTimedOut, and the new worker consumes on from the next one. A
// sticky error (a kernel's illegal address) comes back as the backend's own
// status; the worker's backend tries to recover in place and, where it
// cannot (CUDA, driver 580), the worker stops after that command and is
// replaced. Either way every object the VM held is gone, as it is inline,
// and the recovery is counted once. An idle worker whose VMM has died
// notices within a second and exits. Failures of the worker never hang or
// kill the VMM.
//
// Under MPS (WorkerOptions::mps) a sticky fault in any VM's worker is the
// whole server's: every VM's worker is replaced (its command in hand fails
// with the fault's status), and new workers are forked only once every
// affected one has been reaped, since the server takes no new client before.
//
// Workers are started for the thread that calls create() or that notices
// the failure; the zygote must not have initialised CUDA (it is forked
// before any VM, and never loads libcuda).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/command_engine.h"
#include "kvmtool-gpu/devices/vgpu/kick_eventfd.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_recipe.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_channel.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::vgpu {

class MpsServerGroup; // mps_server_group.h

struct WorkerOptions {
    // Any command, synchronisation included. Below the guest's own 30 s wait,
    // so the guest gets the error status rather than a timeout of its own.
    std::chrono::milliseconds call_timeout{20'000};
    // Fork until the backend is made and guest RAM added to it (CUDA init,
    // a context; pinning all of the RAM with --ram-registration eager).
    std::chrono::milliseconds start_timeout{180'000};
    // create() returns once the worker is forked and told to start; the
    // backend and the registration of guest RAM (CUDA: hundreds of ms) go on
    // while the guest runs, and start() waits for them. false: create()
    // waits, and fails with the worker's reason.
    bool start_in_background = true;
    std::chrono::milliseconds quit_timeout{2'000}; // a clean exit at destruction, then SIGKILL
    uint32_t spin_us = 50;                          // either side spins this long before sleeping
    // --gpu-share mps: the workers of every VM of the run are clients of
    // one MPS server; a fatal fault in one replaces them all (mps_server_group.h).
    std::shared_ptr<MpsServerGroup> mps = nullptr;
};

// Statuses for a command that lost its worker (CUresult values).
inline constexpr Status kWorkerTimedOut = static_cast<Status>(702); // CUDA_ERROR_LAUNCH_TIMEOUT
inline constexpr Status kWorkerDied = VGPU_ERROR_LAUNCH_FAILED;      // 719, unspecified launch failure

class WorkerEngine final : public CommandEngine {
public:
    // Forks the first worker, which makes its backend with `make` and
    // registers `mem` (in the background: WorkerOptions::start_in_background);
    // nullptr with *why (the worker's own reason, e.g. no CUDA device) if it
    // cannot, or cannot even be forked. Throws std::invalid_argument for bad
    // options.
    static std::unique_ptr<WorkerEngine> create(const memmap::GuestMemory& mem, BackendFactory make,
                                                const VgpuOptions& opts, WorkerOptions wopts, std::string* why);
    ~WorkerEngine() override; // as stop()

    uint32_t backend_id() const override { return backend_id_.load(std::memory_order_relaxed); }
    // What the current worker's start found; waits for a start in the
    // background. If the first worker's backend could not start, says why
    // (backend id 0), and no worker is forked again: commands fail NO_DEVICE.
    EngineStart start() override;
    void reset() override; // the worker lets the ring go and frees every object
    // The VM is going away: the worker quits (its process's end frees what
    // it held) or is killed after quit_timeout. A later command forks a new one.
    void stop() override;
    void cancel_call_in_flight() override { cancel_.store(true, std::memory_order_release); }
    int kick_fd() const override { return kick_.fd(); }
    void attach_ring(CommandRing& ring) override;
    Supervision supervise() override;

    // The backend, where it runs, and how many workers replaced the first.
    std::string describe() const;
    // The worker's pid (-1 while there is none).
    pid_t worker_pid() const { return pid_; }
    uint64_t replacements() const { return replacements_; }
    // Messages sent to workers so far (none per command).
    uint64_t messages() const { return messages_; }

private:
    struct CountersMapping; // VgpuCounters in memory kept from forks, handed to every worker
    WorkerEngine(const memmap::GuestMemory& mem, BackendFactory make, const VgpuOptions& opts, WorkerOptions wopts,
                 std::shared_ptr<CountersMapping> counters);

    bool spawn(std::string* why);       // begin_spawn + finish_spawn; false leaves no worker
    bool begin_spawn(std::string* why);  // fork and post Start
    bool finish_spawn(std::string* why); // its reply; false leaves no worker
    void settle_start();                 // the first worker's start, if still in the background
    bool ensure_worker();            // a worker, forking one if there is none (at most once a second)
    bool worker_alive();             // reaps it if it has ended
    void retire_worker();            // SIGKILL, bounded reap; no worker afterwards
    // A lost or unusable worker: counts the recovery (unless the worker's
    // engine `counted` it), logs, forks a new one.
    void replace_worker(const std::string& why, bool counted = false);
    std::string lost_text(WorkerChannel::Wait w, WorkerOp op) const;
    // One request and its reply, bounded by `timeout`; nothing else. The
    // worker stops its ring between two commands to serve it, then goes on.
    WorkerChannel::Wait exchange(WorkerOp op, std::chrono::milliseconds timeout);
    void post(WorkerOp op);
    WorkerChannel::Wait await_reply(std::chrono::milliseconds timeout);
    // Hands ring_ to the current worker (forking one if needed) from ring_'s consumer.
    void attach_worker();
    // The worker was lost: replaces it; where it had the ring, the ring
    // resumes at the worker's consumer, the command in hand fails with
    // `status` (unless kNoFail) and the new worker consumes on.
    static constexpr Status kNoFail = VGPU_SUCCESS;
    void lose_worker(const std::string& why, Status status, bool counted = false);
    // No worker to run them: the ring's waiting commands fail with NO_DEVICE.
    void fail_waiting();

    std::shared_ptr<CountersMapping> counters_mapping_;
    WorkerRecipe recipe_; // the next worker's (its channel and seed set at each spawn)
    WorkerOptions wopts_;
    std::unique_ptr<WorkerChannel> ch_;
    // Read from any thread (tests, descriptions), written by the executor's.
    std::atomic<pid_t> pid_{-1};
    bool starting_ = false;     // Start posted, its reply not yet taken
    bool start_failed_ = false; // the first worker's backend could not start: none will
    bool reaped_ = false;  // pid_ has been waited for: never signal it again
    std::string end_text_; // how it ended, for the log
    std::atomic<uint64_t> replacements_{0};
    std::atomic<uint64_t> messages_{0};
    uint32_t first_seed_;
    std::chrono::steady_clock::time_point next_spawn_{};
    // Killed workers the kernel had not yet let go of, with their MPS generation.
    std::vector<std::pair<pid_t, uint64_t>> unreaped_;
    uint64_t generation_ = 0; // the MPS server generation the current worker was forked in
    // The current worker belongs to an MPS server generation a fault has ended.
    bool mps_affected() const;

    // From the current worker's Start.
    std::atomic<uint32_t> backend_id_{0}; // read by vCPUs (a register) while a replacement writes it
    EngineStart start_;

    KickEventfd kick_; // the ring's doorbell target, inherited by every worker
    std::mutex mu_;    // the engine's calls are the executor's (command_engine.h): this keeps any other caller out of a round trip

    // The device's ring, from ENABLE to RESET (or a broken ring).
    CommandRing* ring_ = nullptr;
    bool attached_ = false;                                 // the current worker consumes ring_
    uint32_t seen_consumer_ = 0;                            // how far it got, as last seen
    std::chrono::steady_clock::time_point progress_{};      // when that last changed, or the ring was idle

    std::atomic<bool> cancel_{false}; // cancel_call_in_flight(): end the current wait now
    bool cancelled_ = false;          // the last wait ended by a cancel
};

} // namespace kvmgpu::vgpu
