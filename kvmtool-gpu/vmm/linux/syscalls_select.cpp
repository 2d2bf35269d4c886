// select and pselect6, served by poll's wait (syscalls_events.cpp): each
// descriptor named in a set becomes a pollfd, and what poll reports comes
// back as bits, with Linux's mapping (readable: POLLIN, POLLHUP, POLLERR;
// writable: POLLOUT, POLLERR; exceptional: POLLPRI). The sets are the
// guest's: nfds is taken as Linux does (negative: EINVAL; above the
// descriptor table: that many), only the words it covers are read and
// written back, and a bit for a descriptor that is not open is EBADF. The
// time left is written back, as Linux does. pselect6's signal mask is
// checked (EFAULT, EINVAL), not applied: a signal never interrupts a wait
// here (syscalls_events.cpp).
#include <poll.h>
#include <time.h>

#include <cerrno>
#include <vector>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr short kReadable = POLLIN | POLLRDNORM | POLLRDBAND | POLLHUP | POLLERR;
constexpr short kWritable = POLLOUT | POLLWRNORM | POLLWRBAND | POLLERR;
constexpr short kExceptional = POLLPRI;

int64_t monotonic_ns() {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// The time from now to `d`, 0 once it has passed.
timespec time_left(const FutexDeadline& d) {
    const int64_t end = d.at.tv_sec > INT64_MAX / 1'000'000'000 - 1 ? INT64_MAX : d.at.tv_sec * 1'000'000'000 + d.at.tv_nsec;
    const int64_t left = std::max<int64_t>(0, end - monotonic_ns());
    return timespec{left / 1'000'000'000, left % 1'000'000'000};
}
} // namespace

int64_t SyscallServer::sys_select(const uint64_t* a, bool pselect) {
    const auto nfds_arg = static_cast<int32_t>(a[0]);
    const uint64_t set_addr[3] = {a[1], a[2], a[3]};
    const uint64_t timeout_addr = a[4];
    if (nfds_arg < 0) return -EINVAL;
    std::vector<uint64_t> sets[3];
    std::optional<FutexDeadline> deadline;
    std::vector<pollfd> polled;
    uint64_t words = 0;
    {
        std::lock_guard lock(mu_);
        const int nfds = std::min(nfds_arg, fds_.limit());
        words = (static_cast<uint64_t>(nfds) + 63) / 64;
        if (timeout_addr) {
            timespec rel{};
            if (pselect) {
                const auto ts = user_.read_obj<timespec>(timeout_addr);
                if (!ts) return -EFAULT;
                rel = *ts;
            } else {
                const auto tv = user_.read_obj<timeval>(timeout_addr);
                if (!tv) return -EFAULT;
                if (tv->tv_usec < 0) return -EINVAL;
                // Linux carries whole seconds out of tv_usec.
                const int64_t extra = tv->tv_usec / 1'000'000;
                rel = {tv->tv_sec > INT64_MAX - extra ? INT64_MAX : tv->tv_sec + extra, (tv->tv_usec % 1'000'000) * 1000};
            }
            if (rel.tv_sec < 0 || rel.tv_nsec < 0 || rel.tv_nsec >= 1'000'000'000) return -EINVAL;
            deadline = deadline_after(CLOCK_MONOTONIC, rel);
        }
        if (pselect && a[5]) { // {const sigset_t *ss; size_t ss_len}
            uint64_t pair[2];
            if (!user_.read(a[5], pair, sizeof pair)) return -EFAULT;
            if (pair[0] && pair[1] != 8) return -EINVAL;
            if (pair[0] && !user_.span(pair[0], 8)) return -EFAULT;
        }
        for (int s = 0; s < 3; ++s) {
            if (!set_addr[s]) continue;
            sets[s].resize(words);
            if (words && !user_.read(set_addr[s], sets[s].data(), words * 8)) return -EFAULT;
        }
        for (int fd = 0; fd < nfds; ++fd) {
            const auto in = [&](int s) { return !sets[s].empty() && (sets[s][fd / 64] >> (fd % 64) & 1); };
            const short events = static_cast<short>((in(0) ? kReadable : 0) | (in(1) ? kWritable : 0) |
                                                    (in(2) ? kExceptional : 0));
            if (!events) continue;
            if (!fds_.get(fd)) return -EBADF;
            polled.push_back({fd, events, 0});
        }
    }
    const int64_t n = poll_files(polled, deadline);
    if (n < 0) return n;
    for (auto& set : sets) std::fill(set.begin(), set.end(), 0);
    int64_t count = 0;
    for (const pollfd& p : polled) {
        if (p.revents & POLLNVAL) return -EBADF; // closed by another thread during the wait
        const short got[3] = {static_cast<short>(p.revents & p.events & kReadable),
                              static_cast<short>(p.revents & p.events & kWritable),
                              static_cast<short>(p.revents & p.events & kExceptional)};
        for (int s = 0; s < 3; ++s) {
            if (!got[s]) continue;
            sets[s][p.fd / 64] |= uint64_t{1} << (p.fd % 64);
            ++count;
        }
    }
    std::lock_guard lock(mu_);
    for (int s = 0; s < 3; ++s)
        if (!sets[s].empty() && !user_.write(set_addr[s], sets[s].data(), words * 8)) return -EFAULT;
    if (timeout_addr && deadline) { // as Linux: a timeout it cannot write back is left as it was
        const timespec left = time_left(*deadline);
        if (pselect) user_.write_obj(timeout_addr, left);
        else user_.write_obj(timeout_addr, timeval{left.tv_sec, left.tv_nsec / 1000});
    }
    return count;
}

} // namespace kvmgpu::linux_abi
