#include "kvmtool-gpu/devices/vgpu/ring_waiter.h"

#include <poll.h>
#include <sched.h>

#include <algorithm>

#include "kvmtool-gpu/devices/vgpu/kick_eventfd.h"
#include "kvmtool-gpu/util/spin.h"

namespace kvmgpu::vgpu {

namespace {
// Past KVM's default halt-polling window, a polling consumer yields its CPU
// at each look, so on a host with more runnable threads than cores (CI's two
// cores, many VMs) it gives way to the vCPUs it waits for.
constexpr uint64_t kYieldAfterNs = 200'000;

PollWindow window_for(const VgpuOptions& o) {
    switch (o.doorbell) {
    case DoorbellMode::Adaptive: return PollWindow::adaptive(uint64_t{o.poll_max_us} * 1000);
    case DoorbellMode::Poll: return PollWindow::fixed(uint64_t{o.poll_spin_us} * 1000);
    case DoorbellMode::Trap:
    case DoorbellMode::Ioeventfd: break;
    }
    return PollWindow::fixed(0); // sleep as soon as the ring is empty
}
} // namespace

RingWaiter::RingWaiter(const VgpuOptions& opts, int kick_fd, VgpuCounters& counters)
    : mode_(opts.doorbell), poll_sleep_ns_(uint64_t{opts.poll_sleep_us} * 1000), kick_fd_(kick_fd),
      counters_(counters), window_(window_for(opts)), last_work_ns_(now_ns()) {}

void RingWaiter::worked() { last_work_ns_ = now_ns(); }

bool RingWaiter::sleep(int other_fd, std::chrono::nanoseconds max) {
    pollfd p[2] = {{kick_fd_, POLLIN, 0}, {other_fd, POLLIN, 0}};
    const auto ns = std::max<int64_t>(max.count(), 0);
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    if (::ppoll(p, other_fd >= 0 ? 2 : 1, &ts, nullptr) <= 0) return false;
    if (p[0].revents) KickEventfd::drain(kick_fd_);
    if (other_fd >= 0 && p[1].revents) KickEventfd::drain(other_fd); // the caller looks at its state next
    return true;
}

void RingWaiter::idle(CommandRing& ring, int other_fd, std::chrono::nanoseconds max_sleep,
                      const std::function<bool()>& awake) {
    const uint64_t polled = now_ns() - last_work_ns_;
    if (polled < window_.ns()) { // bounded: the window ends window_.ns() after the last command
        if (polled < kYieldAfterNs) cpu_relax();
        else sched_yield();
        return;
    }
    if (mode_ == DoorbellMode::Poll) {
        // No kicks come: look again after a fixed sleep.
        sleep(other_fd, std::min<std::chrono::nanoseconds>(max_sleep, std::chrono::nanoseconds(poll_sleep_ns_)));
        VgpuCounters::add(counters_.wakeups);
        return;
    }
    ring.arm_kick();
    if (ring.has_work() || awake()) {
        ring.disarm_kick();
        return;
    }
    const uint64_t t0 = now_ns();
    const bool woken = sleep(other_fd, max_sleep);
    const uint64_t t1 = now_ns();
    VgpuCounters::add(counters_.wakeups);
    ring.disarm_kick();
    // Commands waiting after a sleep nothing ended, and no kick arrived
    // since (one racing the time-out): the guest did not kick when the
    // event index asked it to, or a wake-up was lost.
    if (!woken && ring.has_work() && !sleep(-1, std::chrono::nanoseconds(0)))
        VgpuCounters::add(counters_.missed_kicks);
    window_.woke_after(t1 - t0);
    last_work_ns_ = t1; // poll a window before the next sleep
}

} // namespace kvmgpu::vgpu
