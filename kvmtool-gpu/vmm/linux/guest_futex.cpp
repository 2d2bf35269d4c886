#include "kvmtool-gpu/vmm/linux/guest_futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace kvmgpu::linux_abi {

namespace {
constexpr int64_t kNsPerS = 1'000'000'000;

int64_t to_ns(const timespec& t) { return t.tv_sec * kNsPerS + t.tv_nsec; }
timespec from_ns(int64_t ns) { return timespec{static_cast<time_t>(ns / kNsPerS), static_cast<long>(ns % kNsPerS)}; }
int64_t now_ns(clockid_t clock) {
    timespec t{};
    ::clock_gettime(clock, &t);
    return to_ns(t);
}
// Guest seconds may be anything up to INT64_MAX: saturate instead of overflowing.
int64_t to_ns_saturated(const timespec& t) {
    if (t.tv_sec >= INT64_MAX / kNsPerS - 1) return INT64_MAX;
    return to_ns(t);
}
} // namespace

FutexDeadline deadline_after(clockid_t clock, const timespec& rel) {
    const int64_t now = now_ns(clock), add = to_ns_saturated(rel);
    return FutexDeadline{clock, from_ns(add > INT64_MAX - now ? INT64_MAX : now + add)};
}

int64_t futex_wait(uint32_t* word, uint32_t expected, uint32_t bitset, const std::optional<FutexDeadline>& deadline,
                   const std::atomic<bool>& stopping, int64_t spin_ns) {
    const clockid_t clock = deadline ? deadline->clock : CLOCK_MONOTONIC;
    const int64_t end = deadline ? to_ns_saturated(deadline->at) : INT64_MAX;
    if (spin_ns > 0) {
        const int64_t start = now_ns(CLOCK_MONOTONIC);
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != expected) return -EAGAIN;
        for (;;) {
            for (int i = 0; i < 64; ++i) {
                if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != expected) return 0; // a (possibly spurious) wake-up
                __builtin_ia32_pause();
            }
            if (now_ns(CLOCK_MONOTONIC) - start >= spin_ns || stopping.load(std::memory_order_acquire)) break;
        }
    }
    const int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | (clock == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
    for (bool first = true;; first = false) {
        if (stopping.load(std::memory_order_acquire)) return -EINTR;
        const int64_t now = now_ns(clock);
        if (now >= end) return -ETIMEDOUT;
        const timespec slice = from_ns(end - now > kFutexSliceNs ? now + kFutexSliceNs : end);
        if (::syscall(SYS_futex, word, op, expected, &slice, nullptr, bitset) == 0) return 0;
        switch (errno) {
        // A changed value after the first slice: a wake-up this thread slept through; report it as one.
        case EAGAIN: return first ? -EAGAIN : 0;
        case ETIMEDOUT: continue; // the slice's end: look at `stopping` and the deadline again
        // The VMM's kick (a time-out, Ctrl-C, another thread's exit_group):
        // back to the run loop, which decides; glibc waits again on EINTR.
        case EINTR: return -EINTR;
        default: return -errno;
        }
    }
}

int64_t futex_wake(uint32_t* word, int count, uint32_t bitset) {
    const long n = ::syscall(SYS_futex, word, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, count, nullptr, nullptr, bitset);
    return n < 0 ? -errno : n;
}

} // namespace kvmgpu::linux_abi
