// Futexes on guest words. Guest RAM is mapped in the VMM, so a guest
// futex is the host's private futex on the word's host address: every
// vCPU thread of a VM is a thread of this process, and the host kernel
// does the queueing, the value check and the wake-ups. Waits are cut into
// slices so that a VM being torn down (exit_group, time-out) never waits
// longer than one slice for a thread blocked here. No KVM here.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <optional>

namespace kvmgpu::linux_abi {

// Longest single host wait before `stopping` is looked at again.
constexpr int64_t kFutexSliceNs = 50'000'000;

struct FutexDeadline {
    clockid_t clock = CLOCK_MONOTONIC;
    timespec at{}; // absolute, on `clock`
};

// FUTEX_WAIT_BITSET on `word` while it holds `expected`: 0 when woken (or
// spuriously, which the futex contract allows), -EAGAIN when the value
// differed at the start, -ETIMEDOUT at the deadline, -EINTR when
// `stopping` became true or the VMM kicked this thread (a signal: the run
// loop must look at why). `word` must be 4-byte aligned host memory.
// spin_ns > 0: first watch the word that long and return 0 as soon as it
// changes (a wake-up's value is stored before its FUTEX_WAKE, which in a
// guest reaches the VMM only after a VM exit of tens of microseconds).
int64_t futex_wait(uint32_t* word, uint32_t expected, uint32_t bitset, const std::optional<FutexDeadline>& deadline,
                   const std::atomic<bool>& stopping, int64_t spin_ns = 0);

// Wakes up to `count` waiters of `word` whose bitset meets `bitset`;
// returns how many (or -errno).
int64_t futex_wake(uint32_t* word, int count, uint32_t bitset);

// now + rel on `clock`, for FUTEX_WAIT's relative time-out.
FutexDeadline deadline_after(clockid_t clock, const timespec& rel);

} // namespace kvmgpu::linux_abi
