// The idle half of a ring consumer (the VMM's executor inline, or the GPU
// worker): what it does when a pass found nothing. It polls the ring for a
// window after the last command (PollWindow: fixed, or adaptive), then
// publishes the ring's event index (sleeping), looks once more and sleeps
// on the kick eventfd, so the guest kicks only when it must. With the Poll
// doorbell the guest never kicks: it sleeps a fixed time between looks.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "kvmtool-gpu/devices/vgpu/command_ring.h"
#include "kvmtool-gpu/devices/vgpu/poll_window.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_counters.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_options.h"

namespace kvmgpu::vgpu {

class RingWaiter {
public:
    // `kick_fd`: the consumer's kick eventfd (not owned).
    RingWaiter(const VgpuOptions& opts, int kick_fd, VgpuCounters& counters);

    // A pass made progress: the polling window starts again.
    void worked();
    // A pass found nothing: spins once, or sleeps until a kick, `other_fd`
    // (an eventfd, -1: none) or `max_sleep` (a bound for the caller's own
    // checks); resets the eventfds that woke it.
    // `awake()` is asked after the event index is published and before
    // sleeping: true when something else wants the consumer now.
    void idle(CommandRing& ring, int other_fd, std::chrono::nanoseconds max_sleep, const std::function<bool()>& awake);

    uint64_t window_ns() const { return window_.ns(); }

private:
    // Sleeps on the kick eventfd and other_fd; resets whichever fired.
    // False when neither did (the time-out).
    bool sleep(int other_fd, std::chrono::nanoseconds max);

    const DoorbellMode mode_;
    const uint64_t poll_sleep_ns_;
    const int kick_fd_;
    VgpuCounters& counters_;
    PollWindow window_;
    uint64_t last_work_ns_;
};

} // namespace kvmgpu::vgpu
