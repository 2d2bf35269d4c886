// Time from the TSC. The frequency comes from boot_info.tsc_khz; if the VMM
// left 0 there, from CPUID leaf 0x15/0x16; failing both an assumed 1 GHz
// (tsc_khz_known() says which).
#pragma once

#include <stdint.h>

namespace guest {

inline uint64_t rdtsc()
{
    uint32_t lo, hi;
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

inline uint64_t rdtscp(uint32_t* aux = nullptr)
{
    uint32_t lo, hi, c;
    asm volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(c));
    if (aux != nullptr)
        *aux = c;
    return ((uint64_t)hi << 32) | lo;
}

// Start / end stamps for a timed region: earlier instructions retire before
// tsc_begin reads the clock; tsc_end waits for the region to finish.
inline uint64_t tsc_begin()
{
    asm volatile("lfence" ::: "memory");
    uint64_t t = rdtsc();
    asm volatile("lfence" ::: "memory");
    return t;
}

inline uint64_t tsc_end()
{
    uint64_t t = rdtscp();
    asm volatile("lfence" ::: "memory");
    return t;
}

void tsc_init(uint64_t boot_tsc_khz); // called by the runtime start-up
uint64_t tsc_khz();
bool tsc_khz_known();
// Where the frequency came from: "boot_info", "cpuid.15h", "cpuid.16h", "assumed".
const char* tsc_source();

double tsc_to_seconds(uint64_t ticks);
double tsc_to_us(uint64_t ticks);
uint64_t seconds_to_tsc(double seconds);

} // namespace guest
