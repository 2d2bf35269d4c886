// How long a ring consumer keeps polling after its last command before it
// sleeps on the kick eventfd: fixed, or adapted to the guest's gaps between
// commands as KVM's halt_poll_ns adapts a vCPU's: a wake-up that came soon
// after the sleep began (within the cap) doubles the window, since polling
// that long would have caught it; a long idle halves it. Pure arithmetic
// on durations the caller measured, so tests need no clock.
#pragma once

#include <cstdint>

namespace kvmgpu::vgpu {

class PollWindow {
public:
    static constexpr uint64_t kGrowStartNs = 10'000; // first non-zero window, as KVM's halt_poll_ns_grow_start

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
