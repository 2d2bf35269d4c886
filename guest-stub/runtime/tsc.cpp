// TSC frequency and conversions (see tsc.h).
#include "guest-stub/runtime/tsc.h"

#include "guest-stub/runtime/muldiv.h"

namespace guest {
namespace {
uint64_t g_khz = 1000000;
const char* g_source = "assumed";

void cpuid(uint32_t leaf, uint32_t* a, uint32_t* b, uint32_t* c, uint32_t* d)
{
    asm volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(0));
}
} // namespace

void tsc_init(uint64_t boot_tsc_khz)
{
    if (boot_tsc_khz != 0) {
        g_khz = boot_tsc_khz;
        g_source = "boot_info";
        return;
    }
    uint32_t a, b, c, d;
    cpuid(0, &a, &b, &c, &d);
    uint32_t max_leaf = a;
    if (max_leaf >= 0x15) {
        cpuid(0x15, &a, &b, &c, &d);
        // >= 1 kHz: the conversions divide by g_khz.
        if (a != 0 && b != 0 && c != 0 && (uint64_t)c * b / a >= 1000) {
            g_khz = (uint64_t)c * b / a / 1000;
                g_source = "cpuid.15h";
            return;
        }
    }
    if (max_leaf >= 0x16) {
        cpuid(0x16, &a, &b, &c, &d);
        if ((a & 0xFFFF) != 0) {
            g_khz = (uint64_t)(a & 0xFFFF) * 1000;
                g_source = "cpuid.16h";
        }
    }
}

uint64_t tsc_khz() { return g_khz; }
const char* tsc_source() { return g_source; }

uint64_t tsc_to_ns(uint64_t ticks) { return mul_div_u64(ticks, 1000000, g_khz); }
uint64_t seconds_to_tsc(uint64_t seconds) { return mul_div_u64(mul_div_u64(seconds, g_khz, 1), 1000, 1); }

} // namespace guest
