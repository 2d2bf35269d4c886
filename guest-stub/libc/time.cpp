// Time for guest programs, from the TSC (runtime/tsc.h): intervals only.
// The guest has no calendar, so time() answers (time_t)-1 ("not
// available", as C allows) and CLOCK_REALTIME is refused; the monotonic and
// CPU-time clocks, gettimeofday and clock() count from an arbitrary origin,
// which is all a program timing its own work needs (the guest's one vCPU
// runs only this program, so CPU time and elapsed time agree).
#include <sys/time.h>
#include <time.h>

#include "guest-stub/runtime/tsc.h"

namespace {

uint64_t now_ns() { return guest::tsc_to_ns(guest::rdtsc()); }

} // namespace

extern "C" {

clock_t clock(void) noexcept { return static_cast<clock_t>(now_ns() / 1000); } // CLOCKS_PER_SEC 1000000

time_t time(time_t* out) noexcept
{
    if (out != nullptr)
        *out = static_cast<time_t>(-1);
    return static_cast<time_t>(-1);
}

int clock_gettime(clockid_t id, struct timespec* ts) noexcept
{
    switch (id) { // ts: nonnull, as glibc declares it
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
    case CLOCK_PROCESS_CPUTIME_ID:
    case CLOCK_THREAD_CPUTIME_ID: {
        const uint64_t ns = now_ns();
        ts->tv_sec = static_cast<time_t>(ns / 1000000000u);
        ts->tv_nsec = static_cast<long>(ns % 1000000000u);
        return 0;
    }
    default: // CLOCK_REALTIME & co.: no calendar in the guest
        return -1;
    }
}

// Not the calendar: microseconds from the same origin as CLOCK_MONOTONIC,
// so differences are right (what programs use it for) and dates are not.
int gettimeofday(struct timeval* tv, void*) noexcept
{
    const uint64_t us = now_ns() / 1000;
    tv->tv_sec = static_cast<time_t>(us / 1000000u);
    tv->tv_usec = static_cast<suseconds_t>(us % 1000000u);
    return 0;
}

} // extern "C"
