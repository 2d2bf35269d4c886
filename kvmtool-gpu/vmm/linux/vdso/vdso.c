/* The vDSO kvmtool-gpu gives a Linux-ABI guest: glibc finds it through
 * AT_SYSINFO_EHDR and calls it for the clocks, as it calls Linux's. A
 * system call costs a VM exit (tens of microseconds on kvm-pvm), and
 * programs that time short GPU work read the clock around it; here the
 * clocks come from the TSC, which ring-3 guest code reads natively, and
 * the VMM's parameters in struct kvmgpu_vvar (abi/linux_abi.h). Anything
 * else, and any clock while the page says it is not valid, is the system
 * call. Freestanding: no libc, no relocations (checked by a test). */
#include <stdint.h>

#include "kvmtool-gpu/abi/linux_abi.h"

#define EXPORT __attribute__((visibility("default")))

struct vdso_timespec { int64_t tv_sec; int64_t tv_nsec; };
struct vdso_timeval { int64_t tv_sec; int64_t tv_usec; };
struct vdso_timezone { int32_t tz_minuteswest; int32_t tz_dsttime; };

enum { kClockRealtime = 0, kClockMonotonic = 1, kClockMonotonicRaw = 4, kClockRealtimeCoarse = 5,
       kClockMonotonicCoarse = 6, kClockBoottime = 7 };
enum { kSysGettimeofday = 96, kSysTime = 201, kSysClockGettime = 228, kSysClockGetres = 229 };

static long raw_syscall2(long nr, long a, long b)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return ret;
}

static inline uint64_t read_tsc(void)
{
    uint32_t lo, hi;
    /* lfence: the TSC is read after the seqlock's loads, not before. */
    __asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

static const volatile struct kvmgpu_vvar* vvar(void)
{
    return (const volatile struct kvmgpu_vvar*)KVMGPU_LINUX_VVAR_GPA;
}

/* Nanoseconds on `clock` (only those listed above), 0 with *ok = 0 when the
 * page is not valid. */
static int64_t clock_ns(int clock, int* ok)
{
    const volatile struct kvmgpu_vvar* v = vvar();
    for (;;) {
        const uint32_t seq = v->seq;
        __asm__ volatile("" ::: "memory");
        if (seq & 1) continue;
        if (!v->valid) { *ok = 0; return 0; }
        const uint64_t tsc = read_tsc();
        const uint64_t base = v->tsc_base;
        /* A TSC behind the base (another CPU's, or a base written just now)
         * reads as the base: the clock never steps back. */
        const uint64_t delta = tsc > base ? tsc - base : 0;
        int64_t ns = v->mono_base_ns + (int64_t)(((unsigned __int128)delta * v->mult) >> 32);
        if (clock == kClockRealtime || clock == kClockRealtimeCoarse) ns += v->realtime_offset_ns;
        else if (clock == kClockBoottime) ns += v->boottime_offset_ns;
        else if (clock == kClockMonotonicRaw) ns += v->raw_offset_ns;
        __asm__ volatile("" ::: "memory");
        if (v->seq == seq) { *ok = 1; return ns; }
    }
}

static int served_here(int clock)
{
    return clock == kClockRealtime || clock == kClockMonotonic || clock == kClockMonotonicRaw ||
           clock == kClockRealtimeCoarse || clock == kClockMonotonicCoarse || clock == kClockBoottime;
}

EXPORT int __vdso_clock_gettime(int clock, struct vdso_timespec* ts)
{
    int ok = 0;
    const int64_t ns = served_here(clock) ? clock_ns(clock, &ok) : 0;
    if (!ok) return (int)raw_syscall2(kSysClockGettime, clock, (long)ts);
    ts->tv_sec = ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
    return 0;
}

EXPORT int __vdso_gettimeofday(struct vdso_timeval* tv, struct vdso_timezone* tz)
{
    int ok = 0;
    const int64_t ns = clock_ns(kClockRealtime, &ok);
    if (!ok) return (int)raw_syscall2(kSysGettimeofday, (long)tv, (long)tz);
    if (tv) {
        tv->tv_sec = ns / 1000000000;
        tv->tv_usec = ns % 1000000000 / 1000;
    }
    if (tz) tz->tz_minuteswest = tz->tz_dsttime = 0; /* UTC, as the VMM's gettimeofday says */
    return 0;
}

EXPORT int64_t __vdso_time(int64_t* t)
{
    int ok = 0;
    const int64_t ns = clock_ns(kClockRealtime, &ok);
    if (!ok) return raw_syscall2(kSysTime, (long)t, 0);
    if (t) *t = ns / 1000000000;
    return ns / 1000000000;
}

EXPORT int __vdso_clock_getres(int clock, struct vdso_timespec* res)
{
    return (int)raw_syscall2(kSysClockGetres, clock, (long)res);
}

/* One vCPU, one node. */
EXPORT long __vdso_getcpu(unsigned* cpu, unsigned* node, void* unused)
{
    (void)unused;
    if (cpu) *cpu = 0;
    if (node) *node = 0;
    return 0;
}
