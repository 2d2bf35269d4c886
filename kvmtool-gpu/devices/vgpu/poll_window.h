// How long a ring consumer keeps polling after its last command before it
// sleeps on the kick eventfd: fixed, or adapted to the guest's gaps between
// commands as KVM's halt_poll_ns adapts a vCPU's: a wake-up that came soon
// after the sleep began grows the window (up to the cap), since polling
// longer would have caught it; a long idle halves it. Where KVM doubles,
// this grows at once to a quarter more than the gap it saw (the window
// polled plus the sleep), at least doubling: a guest that pauses 10 ms
// between calls (a frame loop, a host-side step) is caught from its second
// pause on, not its tenth. "Soon" is within the cap or kSoonNs, whichever
// is longer: a sleep's length includes the wake-up's own latency, which on
// a loaded or nested host can exceed a small cap by itself. The price is a
// polling thread while the guest's gaps stay under the cap; an idle guest
// pays one window. Pure arithmetic on durations the caller measured, so
// tests need no clock.
#pragma once

#include <cstdint>

namespace kvmgpu::vgpu {

class PollWindow {
public:
    static constexpr uint64_t kGrowStartNs = 10'000; // first non-zero window, as KVM's halt_poll_ns_grow_start
    static constexpr uint64_t kSoonNs = 1'000'000;   // a wake-up within this of the sleep counts as soon

    // Adaptive within [0, cap_ns], starting at 0; or fixed at cap_ns.
    static PollWindow adaptive(uint64_t cap_ns) { return PollWindow(0, cap_ns, true); }
    static PollWindow fixed(uint64_t ns) { return PollWindow(ns, ns, false); }

    uint64_t ns() const { return window_; }
    // The consumer slept `slept_ns` before a kick (or a time-out) woke it.
    void woke_after(uint64_t slept_ns);

private:
    PollWindow(uint64_t start, uint64_t cap, bool adaptive) : window_(start), cap_(cap), adaptive_(adaptive) {}
    uint64_t window_;
    uint64_t cap_;
    bool adaptive_;
};

} // namespace kvmgpu::vgpu
