// Clocks are the host's (there is no vDSO: each read is a system call).
// Sleeps sleep on the vCPU thread; the watchdog's signal cuts one short
// (EINTR) and its time-out then ends the run.
#include <sys/time.h>

#include <cerrno>
#include <ctime>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
bool known_clock(uint64_t clock) {
    switch (clock) {
    case CLOCK_REALTIME:
    case CLOCK_MONOTONIC:
    case CLOCK_PROCESS_CPUTIME_ID:
    case CLOCK_THREAD_CPUTIME_ID:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME: return true;
    default: return false;
    }
}
// The guest's CPU time is the vCPU thread's.
clockid_t host_clock(uint64_t clock) {
    return clock == CLOCK_PROCESS_CPUTIME_ID ? CLOCK_THREAD_CPUTIME_ID : static_cast<clockid_t>(clock);
}
} // namespace

int64_t SyscallServer::sys_clock_gettime(uint64_t clock, uint64_t ts) {
    if (!known_clock(clock)) return -EINVAL;
    struct timespec t {};
    ::clock_gettime(host_clock(clock), &t);
    return user_.write_obj(ts, t) ? 0 : -EFAULT;
}

int64_t SyscallServer::sys_clock_getres(uint64_t clock, uint64_t ts) {
    if (!known_clock(clock)) return -EINVAL;
    const bool coarse = clock == CLOCK_REALTIME_COARSE || clock == CLOCK_MONOTONIC_COARSE;
    const struct timespec t {0, coarse ? 4000000 : 1};
    return !ts || user_.write_obj(ts, t) ? 0 : -EFAULT;
}

int64_t SyscallServer::sys_gettimeofday(uint64_t tv) {
    struct timespec t {};
    ::clock_gettime(CLOCK_REALTIME, &t);
    const struct timeval v {t.tv_sec, t.tv_nsec / 1000};
    return !tv || user_.write_obj(tv, v) ? 0 : -EFAULT;
}

int64_t SyscallServer::sys_time(uint64_t t) {
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    const int64_t s = now.tv_sec;
    if (t && !user_.write_obj(t, s)) return -EFAULT;
    return s;
}

int64_t SyscallServer::sys_nanosleep(uint64_t clock, uint64_t flags, uint64_t req, uint64_t rem) {
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC && clock != CLOCK_BOOTTIME) return -EINVAL;
    if (flags & ~uint64_t{TIMER_ABSTIME}) return -EINVAL;
    const auto want = user_.read_obj<struct timespec>(req);
    if (!want) return -EFAULT;
    if (want->tv_sec < 0 || want->tv_nsec < 0 || want->tv_nsec >= 1000000000) return -EINVAL;
    struct timespec left {};
    const int rc = ::clock_nanosleep(static_cast<clockid_t>(clock), static_cast<int>(flags), &*want, &left);
    if (rc == EINTR && rem && !(flags & TIMER_ABSTIME)) user_.write_obj(rem, left);
    return rc == 0 ? 0 : -rc;
}

} // namespace kvmgpu::linux_abi
