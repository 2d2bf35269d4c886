// Waiting on host descriptors for a guest (poll, ppoll, epoll_wait, and a
// blocking read or write of a pipe or eventfd), bounded as futex waits are
// (guest_futex.h): each host wait lasts one slice at most, so a VM told to
// stop never waits longer than a slice for a thread blocked here, and the
// VMM's kick (a signal) ends it at once. No KVM here.
#pragma once

#include <poll.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>

#include "kvmtool-gpu/vmm/linux/guest_futex.h"

namespace kvmgpu::linux_abi {

// One look, waiting on the host for at most `slice` (a zero slice: no
// wait): how many things are ready (> 0), 0 for none, or -errno.
using WaitAttempt = std::function<int64_t(const timespec& slice)>;

// Calls `attempt` until it finds something ready (its count), `deadline`
// passes (0; nullopt: never), `stopping` is set or the host wait is
// interrupted (-EINTR), or it fails (its -errno). A deadline already passed
// still gets one look, as poll with a zero timeout does; so does a wait
// begun while stopping, with no wait in it.
int64_t wait_in_slices(const WaitAttempt& attempt, const std::optional<FutexDeadline>& deadline,
                       const std::atomic<bool>& stopping);

// ppoll(2) over `fds` for at most `slice`: the count, or -errno.
int64_t host_poll(pollfd* fds, size_t n, const timespec& slice);

} // namespace kvmgpu::linux_abi
