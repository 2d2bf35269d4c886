// A GpuBackend that runs another backend in a worker process of its own
// (gpu_worker.h), so that a GPU fault which poisons a process's CUDA (driver
// 580: after an illegal address even cuCtxCreate fails) costs one worker,
// not the VMM: the worker is killed and a fresh one forked, with a new
// context and guest RAM registered again.
//
// Every call is one round trip over an RpcChannel (shared memory, spin then
// futex). Host pointers into guest RAM pass as numbers: guest RAM is
// MAP_SHARED (memmap::Backing) and was mapped before the worker was forked,
// which register_guest_ram() verifies. Other host pointers are copied
// through the channel's data area: contiguous copies in pieces (made
// synchronous), module images, names and kernel parameters whole (larger
// than the area: VGPU_ERROR_INVALID_VALUE); scatter-gather runs must lie in
// registered guest RAM (else VGPU_ERROR_INVALID_VALUE) and long run lists go
// in several calls.
//
// Failures of the worker itself never hang or kill the VMM. A call that gets
// no reply within its bound, or whose worker dies, kills the worker (SIGKILL,
// bounded reap), forks a new one and returns kWorkerTimedOut or
// kWorkerDied. A sticky error (a kernel's illegal address) comes back as
// the backend's own status; recover_from() then lets the worker's backend
// try to recover in place and, where it cannot (CUDA, driver 580), replaces
// the worker the same way. Either way recover_from() returns true once, and
// every backend object made before is gone (the device model drops the VM's
// handles). Later calls go to the new worker. An idle worker whose VMM has
// died notices within a second and exits.
//
// The worker is forked from the thread that calls create() or that notices
// the failure; the VMM process must not have initialised CUDA before (a
// forked child cannot use its parent's CUDA). One thread at a time, as for
// every backend.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/gpu_worker.h"
#include "kvmtool-gpu/devices/vgpu/backends/guest_ram_map.h"
#include "kvmtool-gpu/devices/vgpu/backends/rpc_channel.h"
#include "kvmtool-gpu/devices/vgpu/backends/shared_pieces.h"

namespace kvmgpu::vgpu {

struct RemoteBackendOptions {
    // Any call, synchronisation included. Below the guest's own 30 s wait,
    // so the guest gets the error status rather than a timeout of its own.
    std::chrono::milliseconds call_timeout{20'000};
    std::chrono::milliseconds start_timeout{60'000};     // fork until the backend is made (CUDA init, context)
    std::chrono::milliseconds register_timeout{120'000}; // registering (pinning) one slice of guest RAM
    std::chrono::milliseconds quit_timeout{2'000};       // a clean exit at destruction, then SIGKILL
    // The channel's data area: the largest module image (VgpuOptions'
    // max_module_bytes, 64 MiB) and its NUL, with room to spare.
    uint64_t data_bytes = (64ull << 20) + (1ull << 20);
    uint32_t spin_us = 50; // either side spins this long before sleeping
};

// Statuses for a call that lost its worker (CUresult values).
inline constexpr Status kWorkerTimedOut = static_cast<Status>(702); // CUDA_ERROR_LAUNCH_TIMEOUT
inline constexpr Status kWorkerDied = VGPU_ERROR_LAUNCH_FAILED;      // 719, unspecified launch failure

class RemoteBackend final : public GpuBackend {
public:
    // Forks the first worker, which runs `make`; nullptr with *why (the
    // worker's own reason, e.g. no CUDA device) if it cannot make a backend.
    static std::unique_ptr<RemoteBackend> create(BackendFactory make, RemoteBackendOptions opts, std::string* why);
    ~RemoteBackend() override; // asks the worker to quit, kills it if it does not, reaps it

    uint32_t id() const override { return id_; }
    std::string describe() const override;
    bool real_kernels() const override { return real_kernels_; }
    SgStrategy default_sg_strategy() const override { return default_sg_; }

    Status register_guest_ram(void* host, uint64_t bytes) override;
    uint64_t register_ns() const override { return register_ns_; }
    uint64_t guest_ram_device_address(const void* host) const override { return windows_.device_address(host); }

    Status device_count(int* out) override;
    Status device_attribute(int attribute, int ordinal, int* out) override;
    Status device_name(int ordinal, char* buf, size_t len) override;
    Status device_total_mem(int ordinal, uint64_t* out) override;
    Status ctx_synchronize() override;

    Status mem_alloc(uint64_t bytes, uint64_t* dptr) override;
    Status mem_free(uint64_t dptr) override;
    Status mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes) override;

    Status memcpy_htod(uint64_t dst, const void* src, uint64_t bytes, BackendStream s, bool async) override;
    Status memcpy_dtoh(void* dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) override;
    Status memcpy_dtod(uint64_t dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) override;
    Status memcpy_htod_sg(uint64_t dst, std::span<const memmap::HostRun> runs, SgStrategy how, BackendStream s,
                          bool async) override;
    Status memcpy_dtoh_sg(uint64_t src, std::span<const memmap::HostRun> runs, SgStrategy how, BackendStream s,
                          bool async) override;
    // The list and every region must be guest RAM the worker shares.
    Status memcpy_sg_walk(bool htod, uint64_t dptr, const SgWalk& walk, BackendStream s, bool async) override;
    Status memset_d8(uint64_t dptr, uint8_t value, uint64_t count, BackendStream s, bool async) override;
    Status memset_d32(uint64_t dptr, uint32_t value, uint64_t count, BackendStream s, bool async) override;

    Status module_load(std::span<const uint8_t> image, BackendModule* out) override;
    Status module_unload(BackendModule m) override;
    Status module_get_function(BackendModule m, std::string_view name, BackendFunction* out,
                               ParamLayout* layout) override;
    Status launch(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                  std::span<void* const> params, std::span<const uint16_t> sizes) override;

    Status stream_create(uint32_t flags, BackendStream* out) override;
    Status stream_synchronize(BackendStream s) override;
    Status stream_destroy(BackendStream s) override;
    Status event_create(uint32_t flags, BackendEvent* out) override;
    Status event_record(BackendEvent e, BackendStream s) override;
    Status event_synchronize(BackendEvent e) override;
    Status event_elapsed_ms(BackendEvent start, BackendEvent end, float* ms) override;
    Status event_destroy(BackendEvent e) override;

    // True once after each replacement of the worker (a dead or hung worker,
    // or a sticky error its backend could not recover from in place), or
    // when the worker's backend recovered in place; false for errors that
    // leave every object usable.
    bool recover_from(Status s) override;
    void cancel_call_in_flight() override { cancel_.store(true, std::memory_order_release); }

    // The worker's pid (-1 while there is none), and how many workers were
    // started after the first.
    pid_t worker_pid() const { return pid_; }
    uint64_t replacements() const { return replacements_; }
    // Tests: makes the worker commit `f` (see WorkerFault).
    Status inject_fault(WorkerFault f);

private:
    // A slice of guest RAM the worker shares, re-registered in each new worker.
    struct SharedRam {
        uint8_t* host;
        uint64_t bytes;
        std::vector<SharedPiece> pieces; // what the worker must see there too
        bool seen = false;               // the current worker shares these pages
        uint64_t dev = 0;                // their device address in the current worker (0: none)
        Status status = VGPU_SUCCESS;    // the current worker's register_guest_ram()
    };
    struct Reply {
        RpcReply r{};
        bool answered = false; // false: the worker was lost (and replaced), r.status says how
    };

    RemoteBackend(BackendFactory make, RemoteBackendOptions opts) : make_(std::move(make)), opts_(opts) {}

    // remote_backend.cpp: the worker's life.
    bool spawn(std::string* why);   // fork, handshake, guest RAM; false leaves no worker
    bool ensure_worker();           // a worker, forking one if there is none (at most once a second)
    bool worker_alive();            // reaps it if it has ended
    void retire_worker();           // SIGKILL, bounded reap; no worker afterwards
    void replace_worker(const std::string& why);
    std::string lost_text(RpcChannel::Wait w, RpcOp op) const;
    void apply_info(const RpcReply& r);
    void refresh_info();
    void rebuild_windows();
    RpcChannel::Wait register_in_worker(SharedRam& r);
    bool shared(const void* host, uint64_t bytes) const; // inside guest RAM the worker shares
    // One request and its reply, bounded by `timeout`; nothing else.
    RpcChannel::Wait exchange(RpcOp op, std::initializer_list<uint64_t> args, uint64_t in_bytes, uint32_t flags,
                              std::chrono::milliseconds timeout);
    // A call: input already in the data area; a lost worker is replaced
    // and the call answers kWorkerTimedOut / kWorkerDied.
    Reply call(RpcOp op, std::initializer_list<uint64_t> args, uint64_t in_bytes = 0, uint32_t flags = 0,
               std::chrono::milliseconds timeout = std::chrono::milliseconds::zero());
    // The data area to write a call's input into; nullptr when no worker can be had.
    uint8_t* area();

    // remote_backend_ops.cpp helpers.
    Status simple(RpcOp op, std::initializer_list<uint64_t> args, uint64_t* out0 = nullptr, uint64_t in_bytes = 0);
    Status created(const Reply& r, uint64_t* out); // a call that made an object
    Status staged_copy(bool htod, uint8_t* host, uint64_t dptr, uint64_t bytes, BackendStream s);
    Status sg(bool htod, uint64_t dptr, std::span<const memmap::HostRun> runs, SgStrategy how, BackendStream s,
              bool async);

    BackendFactory make_;
    RemoteBackendOptions opts_;
    std::unique_ptr<RpcChannel> ch_;
    pid_t pid_ = -1;
    bool reaped_ = false;    // pid_ has been waited for: never signal it again
    std::string end_text_;   // how it ended, for the log
    uint64_t replacements_ = 0;
    bool replaced_ = false;  // recover_from() has not yet reported the last replacement
    bool pristine_ = true;   // the worker holds no object yet: replacing it loses nothing
    std::chrono::steady_clock::time_point next_spawn_{};
    std::vector<pid_t> unreaped_; // killed workers the kernel had not yet let go of

    // Cached from the worker (Info), refreshed with each worker.
    uint32_t id_ = 0;
    bool real_kernels_ = false;
    SgStrategy default_sg_ = SgStrategy::Coalesce;
    uint64_t register_ns_ = 0;
    std::string describe_;

    std::vector<SharedRam> ram_; // guest RAM registered through this backend and shared with workers
    std::atomic<bool> cancel_{false}; // cancel_call_in_flight(): end the current wait now
    GuestRamMap windows_;        // their zero-copy device addresses in the current worker
};

} // namespace kvmgpu::vgpu
