#include "kvmtool-gpu/vmm/linux/guest_clock.h"

#include <time.h>
#include <x86intrin.h>

#include <algorithm>

namespace kvmgpu::linux_abi {

namespace {
constexpr int64_t kNsPerS = 1'000'000'000;

int64_t ns_of(clockid_t c) {
    timespec t{};
    ::clock_gettime(c, &t);
    return t.tv_sec * kNsPerS + t.tv_nsec;
}

// ns per tick, times 2^32, from a span of `ns` over `ticks`.
uint64_t mult_of(int64_t ns, uint64_t ticks) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(ns) << 32) / ticks);
}
} // namespace

HostClocks read_host_clocks() {
    // The TSC halfway through the CLOCK_MONOTONIC read; the others just
    // after it (their offsets from it are what the guest uses).
    const uint64_t t0 = __rdtsc();
    const int64_t mono = ns_of(CLOCK_MONOTONIC);
    const uint64_t t1 = __rdtsc();
    return {t0 + (t1 - t0) / 2, mono, ns_of(CLOCK_REALTIME), ns_of(CLOCK_BOOTTIME), ns_of(CLOCK_MONOTONIC_RAW)};
}

GuestClock::GuestClock(uint64_t tsc_khz, int64_t tsc_offset, const HostClocks& first)
    : offset_(tsc_offset), ticks_per_s_(tsc_khz * 1000), first_(first) {
    page_.valid = 1;
    page_.tsc_base = guest_tsc(first.tsc);
    page_.mult = mult_of(kNsPerS, ticks_per_s_);
    page_.mono_base_ns = first.mono_ns;
    page_.realtime_offset_ns = first.real_ns - first.mono_ns;
    page_.boottime_offset_ns = first.boot_ns - first.mono_ns;
    page_.raw_offset_ns = first.raw_ns - first.mono_ns;
}

int64_t GuestClock::mono_at(uint64_t host_tsc) const {
    const uint64_t tsc = guest_tsc(host_tsc);
    const uint64_t delta = tsc > page_.tsc_base ? tsc - page_.tsc_base : 0;
    return page_.mono_base_ns + static_cast<int64_t>((static_cast<unsigned __int128>(delta) * page_.mult) >> 32);
}

bool GuestClock::due(uint64_t host_tsc) const { return guest_tsc(host_tsc) - page_.tsc_base >= ticks_per_s_; }

void GuestClock::follow(const HostClocks& now) {
    if (now.tsc <= first_.tsc || now.mono_ns <= first_.mono_ns) return;
    const int64_t guest_now = mono_at(now.tsc);
    // The rate over everything seen so far, then a correction spread over
    // the next second: err ns ahead -> err fewer ns in that second.
    const uint64_t rate = mult_of(now.mono_ns - first_.mono_ns, now.tsc - first_.tsc);
    int64_t err = guest_now - now.mono_ns;
    int64_t base = guest_now;
    if (err < 0) { // behind: step forward to the host's clock
        base = now.mono_ns;
        err = 0;
    }
    err = std::min(err, kMaxSlewNs);
    page_.tsc_base = guest_tsc(now.tsc);
    page_.mono_base_ns = base;
    page_.mult = rate - static_cast<uint64_t>((static_cast<unsigned __int128>(rate) * err) / kNsPerS);
    page_.realtime_offset_ns = now.real_ns - now.mono_ns;
    page_.boottime_offset_ns = now.boot_ns - now.mono_ns;
    page_.raw_offset_ns = now.raw_ns - now.mono_ns;
}

} // namespace kvmgpu::linux_abi
