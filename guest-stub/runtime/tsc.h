// Time from the TSC. The frequency comes from boot_info.tsc_khz; if the VMM
// left 0 there, from CPUID leaf 0x15/0x16; failing both an assumed 1 GHz
// (tsc_source() says which).
#pragma once

#include <stdint.h>

namespace guest {

inline uint64_t rdtsc()
{
    uint32_t lo, hi;
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

// Start / end stamps for a timed region. Plain rdtsc, no rdtscp or lfence:
// under kvm-pvm the guest runs through KVM's instruction emulator, which
// executes rdtsc but neither of the others. The memory clobber keeps the
// compiler from moving loads and stores across a stamp; the CPU may still
// overlap a few instructions with it, which is noise at the millisecond
// scale the guests measure.
inline uint64_t tsc_begin()
{
    asm volatile("" ::: "memory");
    uint64_t t = rdtsc();
    asm volatile("" ::: "memory");
    return t;
}

inline uint64_t tsc_end() { return tsc_begin(); }

void tsc_init(uint64_t boot_tsc_khz); // called by the runtime start-up
uint64_t tsc_khz();
// Where the frequency came from: "boot_info", "cpuid.15h", "cpuid.16h", "assumed".
const char* tsc_source();

// Integer conversions (no floating point in guest code), truncating, with a
// 128-bit intermediate; results that do not fit saturate at UINT64_MAX.
uint64_t tsc_to_ns(uint64_t ticks);
uint64_t seconds_to_tsc(uint64_t seconds);

} // namespace guest
