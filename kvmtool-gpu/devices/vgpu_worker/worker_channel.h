// The shared-memory channel between the VMM and one GPU worker process: one
// request slot, one reply slot and a small data area, in a memfd the VMM
// makes and hands the worker as a descriptor (each maps it where it likes).
// Strictly one call at a time: the VMM posts a request and waits for its
// reply. Each side publishes by bumping a sequence number (release) and
// wakes the other with a (process-shared) futex only when the other sleeps;
// both spin briefly before sleeping, so back-to-back calls cost no syscall.
// Every wait is bounded: the VMM's by a deadline and a liveness check, the
// worker's by noticing that its parent is gone.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "kvmtool-gpu/devices/vgpu/command_ring.h"
#include "memmap/fork_sharing.h"

namespace kvmgpu::vgpu {

// The messages: the worker's life and the VM's control requests. Commands
// never cross: the worker consumes the ring in guest RAM, which both
// processes map (each at its own addresses).
enum class WorkerOp : uint32_t {
    // The worker makes its engine and starts it; out: backend_id, start,
    // description (data area), or (status != SUCCESS) why it could not (data area).
    Start = 1,
    // in: ring_*. The worker attaches its own view of the ring ENABLE
    // accepted and, after replying, consumes it from ring_consumer on.
    Attach,
    Reset, // RESET: the worker lets the ring go; the engine frees every object
    Quit,  // destroy the engine and exit
};

struct WorkerRequest {
    uint32_t op; // WorkerOp
    uint64_t in_bytes; // input bytes at the start of the data area
    uint64_t ring_gpa; // Attach
    uint32_t ring_entries;
    uint32_t ring_consumer;
};

// While the worker consumes the ring: what it tells the VMM without a
// message, and the VMM's signal to stop between commands.
struct RingState {
    enum State : uint32_t { Off, Consuming, Broken, Unusable };
    std::atomic<uint32_t> consumer{0}; // the worker completed every command before this ring index
    std::atomic<uint32_t> state{Off};  // Broken: the guest broke the ring; Unusable: the backend is lost
    std::atomic<bool> stop_pass{false}; // set by the VMM before it posts a request
    std::atomic<uint32_t> lost_status{0}; // Unusable: the driver's sticky status (an MPS server's fault)
};

// WorkerReply::flags
inline constexpr uint32_t kWorkerUnusable = 1; // the backend lost its context for good: replace the worker

struct WorkerReply {
    uint32_t status;
    uint32_t flags;
    uint32_t backend_id;
    uint32_t registration;
    uint64_t registration_ns;
    uint64_t features;
    uint64_t out_bytes; // output bytes at the start of the data area
};

class WorkerChannel {
public:
    // Throws std::system_error (mmap). data_bytes > 0; spin_us: how long
    // either side spins before it sleeps on the futex.
    // The memory is shared with the one worker it is for and no other fork
    // (memmap/fork_sharing.h): the worker receives share().fd.
    static std::unique_ptr<WorkerChannel> create(uint64_t data_bytes, uint32_t spin_us);
    // The worker's side: a channel create() made, received as its descriptor
    // (owned from then on, closed on failure too). Throws std::system_error
    // or std::invalid_argument (a descriptor too small for data_bytes).
    static std::unique_ptr<WorkerChannel> adopt(int fd, uint64_t data_bytes, uint32_t spin_us);
    ~WorkerChannel();
    memmap::ForkShare share() const { return share_; }
    WorkerChannel(const WorkerChannel&) = delete;
    WorkerChannel& operator=(const WorkerChannel&) = delete;

    WorkerRequest& request();
    WorkerReply& reply();
    RingState& ring_state();
    uint8_t* data() const { return data_; }
    uint64_t data_bytes() const { return data_bytes_; }

    // ---- VMM side --------------------------------------------------------
    enum class Wait { Done, TimedOut, PeerGone };
    // Publishes request() to the worker.
    void post_request();
    // Waits for the reply to the last request until `deadline`. Between
    // sleeps (every few milliseconds) asks `alive()`; false ends the wait.
    Wait wait_reply(std::chrono::steady_clock::time_point deadline, const std::function<bool()>& alive);

    // ---- worker side -----------------------------------------------------
    // Waits for the next request. False when `parent` is no longer this
    // process's parent (the VMM died): the worker should exit.
    bool wait_request(pid_t parent);
    // Publishes reply() for the request in hand.
    void post_reply();
    // A request is waiting (a cheap look, for the ring loop).
    bool request_pending() const;

private:
    struct Shared;
    WorkerChannel(Shared* shared, memmap::ForkShare share, uint8_t* data, uint64_t data_bytes, uint64_t spin_ns)
        : shared_(shared), share_(share), data_(data), data_bytes_(data_bytes), spin_ns_(spin_ns) {}

    Shared* shared_;
    memmap::ForkShare share_;
    uint8_t* data_;
    uint64_t data_bytes_;
    uint64_t spin_ns_;
    uint32_t posted_ = 0; // VMM: seq of the last request
    uint32_t served_ = 0; // worker: seq of the last request taken
};

} // namespace kvmgpu::vgpu
