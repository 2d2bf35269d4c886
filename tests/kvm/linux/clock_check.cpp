// The vDSO's clocks in a Linux-ABI guest: glibc finds the vDSO through
// AT_SYSINFO_EHDR; successive readings never go back; each clock agrees
// with the VMM's answer to the system call itself (within a second: this
// checks units, offsets and clock ids, not speed); clocks the vDSO does not
// serve still work. linux-guests.sh then checks, from the VMM's count of
// system calls, that the loop's reads made none (and, with --no-vdso,
// that each was one). Usage: clock_check [N [no-vdso]].
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {
int failures = 0;

void check(bool ok, const char* what) {
    std::printf("guest: %s: %s\n", what, ok ? "ok" : "FAILED");
    failures += !ok;
}

long long ns(const timespec& t) { return t.tv_sec * 1000000000LL + t.tv_nsec; }

// |vDSO - system call| for one clock, in ns.
long long disagreement(clockid_t c) {
    timespec v{}, s{};
    clock_gettime(c, &v);
    syscall(SYS_clock_gettime, c, &s);
    return llabs(ns(v) - ns(s));
}
} // namespace

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 100000;
    const bool vdso_expected = !(argc > 2 && std::strcmp(argv[2], "no-vdso") == 0);
    check((getauxval(AT_SYSINFO_EHDR) != 0) == vdso_expected,
          vdso_expected ? "AT_SYSINFO_EHDR names a vDSO" : "no AT_SYSINFO_EHDR (--no-vdso)");

    long backwards = 0;
    timespec prev{};
    clock_gettime(CLOCK_MONOTONIC, &prev);
    for (long i = 0; i < n; ++i) {
        timespec t{};
        clock_gettime(CLOCK_MONOTONIC, &t);
        backwards += ns(t) < ns(prev);
        prev = t;
    }
    std::printf("guest: %ld CLOCK_MONOTONIC reads, %ld went back\n", n, backwards);
    check(backwards == 0, "monotonic never goes back");

    const long long second = 1000000000LL;
    const long long mono = disagreement(CLOCK_MONOTONIC);
    std::printf("guest: CLOCK_MONOTONIC: vDSO and system call %lld ns apart\n", mono);
    check(mono < second, "CLOCK_MONOTONIC agrees with the system call");
    check(disagreement(CLOCK_REALTIME) < second, "CLOCK_REALTIME agrees with the system call");
    check(disagreement(CLOCK_BOOTTIME) < second, "CLOCK_BOOTTIME agrees with the system call");
    check(disagreement(CLOCK_MONOTONIC_RAW) < second, "CLOCK_MONOTONIC_RAW agrees with the system call");
    timeval tv{};
    gettimeofday(&tv, nullptr);
    timespec real{};
    syscall(SYS_clock_gettime, CLOCK_REALTIME, &real);
    check(llabs(tv.tv_sec * 1000000LL + tv.tv_usec - ns(real) / 1000) < 1000000, "gettimeofday agrees");
    check(llabs(static_cast<long long>(time(nullptr)) - real.tv_sec) <= 1, "time agrees");
    timespec cpu{};
    check(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0, "CLOCK_PROCESS_CPUTIME_ID (a system call) works");
    return failures ? 1 : 0;
}
