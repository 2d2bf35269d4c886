// The shared-memory channel between the VMM and one GPU worker process: one
// request slot, one reply slot and a data area, in a MAP_SHARED|MAP_ANONYMOUS
// mapping made before fork(), so both processes see it at the same address.
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

namespace kvmgpu::vgpu {

// What the VMM asks. `op` is an RpcOp (gpu_worker.h); the meaning of the
// arguments and of the data area is per op.
struct RpcRequest {
    uint32_t op;
    uint32_t flags;
    uint64_t arg[8];
    uint64_t in_bytes; // input bytes at the start of the data area
};

// What the worker answers. The data area then holds `out_bytes` of output.
struct RpcReply {
    uint32_t status;
    uint32_t pad;
    uint64_t out[4];
    uint64_t out_bytes;
};

class RpcChannel {
public:
    // Throws std::system_error (mmap). data_bytes > 0; spin_us: how long
    // either side spins before it sleeps on the futex.
    static std::unique_ptr<RpcChannel> create(uint64_t data_bytes, uint32_t spin_us);
    ~RpcChannel();
    RpcChannel(const RpcChannel&) = delete;
    RpcChannel& operator=(const RpcChannel&) = delete;

    RpcRequest& request();
    RpcReply& reply();
    uint8_t* data() const { return data_; }
    uint64_t data_bytes() const { return data_bytes_; }
    // Gives the data area's pages beyond the first `keep` bytes back to the
    // kernel (after a large transfer), keeping the channel's footprint small.
    void trim(uint64_t keep);

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

private:
    struct Shared;
    RpcChannel(Shared* shared, uint64_t map_bytes, uint8_t* data, uint64_t data_bytes, uint64_t spin_ns)
        : shared_(shared), map_bytes_(map_bytes), data_(data), data_bytes_(data_bytes), spin_ns_(spin_ns) {}

    Shared* shared_;
    uint64_t map_bytes_;
    uint8_t* data_;
    uint64_t data_bytes_;
    uint64_t spin_ns_;
    uint32_t posted_ = 0; // VMM: seq of the last request
    uint32_t served_ = 0; // worker: seq of the last request taken
};

} // namespace kvmgpu::vgpu
