#include "kvmtool-gpu/vmm/linux/guest_wait.h"

#include <cerrno>

namespace kvmgpu::linux_abi {

namespace {
constexpr int64_t kNsPerS = 1'000'000'000;

int64_t now_ns(clockid_t clock) {
    timespec t{};
    ::clock_gettime(clock, &t);
    return t.tv_sec * kNsPerS + t.tv_nsec;
}
int64_t deadline_ns(const FutexDeadline& d) {
    if (d.at.tv_sec >= INT64_MAX / kNsPerS - 1) return INT64_MAX;
    return d.at.tv_sec * kNsPerS + d.at.tv_nsec;
}
} // namespace

int64_t host_poll(pollfd* fds, size_t n, const timespec& slice) {
    const int rc = ::ppoll(fds, n, &slice, nullptr);
    return rc < 0 ? -errno : rc;
}

int64_t wait_in_slices(const WaitAttempt& attempt, const std::optional<FutexDeadline>& deadline,
                       const std::atomic<bool>& stopping) {
    const clockid_t clock = deadline ? deadline->clock : CLOCK_MONOTONIC;
    const int64_t end = deadline ? deadline_ns(*deadline) : INT64_MAX;
    for (bool first = true;; first = false) {
        // Stopping: one look that does not wait (what is ready is still told), then EINTR.
        const bool stop = stopping.load(std::memory_order_acquire);
        if (stop && !first) return -EINTR;
        const int64_t now = now_ns(clock);
        const int64_t left = end > now ? end - now : 0;
        if (left == 0 && !first) return 0;
        const int64_t wait = stop ? 0 : left < kFutexSliceNs ? left : kFutexSliceNs;
        const int64_t n = attempt(timespec{0, static_cast<long>(wait)});
        if (n != 0) return n; // ready, or -EINTR (the VMM's kick), or an error
        if (stop) return -EINTR;
        if (left == 0) return 0;
    }
}

} // namespace kvmgpu::linux_abi
