// What the p2p guest (guest-stub/programs/p2p.cpp) and its native twin
// (kvmtool-gpu/bench/native_p2p.cpp) must agree on, so both time the same
// work: how many copies one bandwidth measurement queues, and the limits of
// the sweep. Freestanding (no libc), so the guest compiles it.
#pragma once

#include <stdint.h>

namespace kvmgpu::bench {

inline constexpr uint64_t kP2pMaxBytes = 1ull << 30;  // largest copy: 1 GiB
inline constexpr unsigned kP2pMaxSizes = 16;
inline constexpr unsigned kP2pMaxDevices = 8;
inline constexpr uint64_t kP2pMaxLatencyIters = 100000;
inline constexpr unsigned kP2pMaxTrials = 20;

// Copies queued between one pair of events: about 512 MiB in all, at least
// 3 and at most 200, so small copies are not lost in one event's
// resolution and 1 GiB takes three.
inline constexpr uint64_t p2p_reps(uint64_t bytes)
{
    const uint64_t r = bytes == 0 ? 200 : (512ull << 20) / bytes;
    return r < 3 ? 3 : r > 200 ? 200 : r;
}

} // namespace kvmgpu::bench
