// How a guest's run ends, the same for every vCPU thread (Linux's
// exit_group): the first end any thread reports wins and stops them all;
// the watchdog's time-out and a stop request (Ctrl-C) are such ends, seen
// by the first vCPU's thread (the one the watchdog kicks); a thread's plain
// exit ends only that thread, and when the first thread has exited the run
// lasts until the others have, the last one's code being the process's.
// Scoped to one VM; every vCPU loop reads ended() at each exit.
#pragma once

#include <chrono>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include "kvmtool-gpu/vmm/vcpu_context.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"

namespace kvmgpu {

class GroupExit {
public:
    // `on_end` runs once, on the thread that ends the group, outside this
    // class's lock: it wakes what may block a thread (system calls that
    // wait, the supervisor that kicks the other vCPUs).
    explicit GroupExit(std::function<void()> on_end) : on_end_(std::move(on_end)) {}

    // The guest ends for every thread (the first call's end wins).
    void end(GroupEnd e);
    bool ended() const { return ended_.load(std::memory_order_acquire); }

    // The run's watchdog (and its time-out, for the line), before any vCPU
    // runs; run() ends after its last vCPU thread, so it outlives them.
    void watch(const VcpuWatchdog& watchdog, double timeout_s);
    // At each exit of `ctx`'s vCPU: true when its loop must stop, because
    // the group ended or (on the first vCPU) the watchdog did, which ends it.
    bool over(VcpuContext& ctx);

    // A thread after the first started, or left its loop (with its exit code
    // when it exited rather than being stopped).
    void thread_started();
    void thread_left(std::optional<uint32_t> exit_code);

    // The first vCPU's loop has returned: the run's end. When the first
    // thread only exited, waits for the group's end, the watchdog's, or the
    // other threads' exits (the last one's code).
    GroupEnd settle(VcpuContext& first);

private:
    // The watchdog's end, if it fired or was interrupted.
    bool end_by_watchdog(VcpuContext& first);

    std::function<void()> on_end_;
    mutable std::mutex mu_;
    std::condition_variable changed_; // a thread left, or the group ended
    std::optional<GroupEnd> end_;
    std::atomic<bool> ended_{false};
    uint32_t others_live_ = 0;
    uint32_t last_exit_code_ = 0;
    std::optional<std::chrono::steady_clock::time_point> last_exit_at_; // another thread's, with a code
    const VcpuWatchdog* watchdog_ = nullptr;
    double timeout_s_ = 0;
};

} // namespace kvmgpu
