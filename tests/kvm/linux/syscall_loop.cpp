// The system-call round trip of a Linux-ABI guest: N getpid calls timed
// with CLOCK_MONOTONIC (two more system calls), then an optional sleep (a
// guest that stays alive while a test looks at its VMM). Usage:
// syscall_loop [N [SLEEP_MS]].
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 10000;
    timespec t0{}, t1{};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; ++i) syscall(SYS_getpid);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3;
    std::printf("getpid round trip: %.2f us (%ld calls in %.1f ms)\n", n > 0 ? us / n : 0.0, n, us / 1e3);
    if (argc > 2) usleep(static_cast<useconds_t>(std::atol(argv[2])) * 1000);
    return 0;
}
