// The two primitives every bounded spin-then-sleep wait here uses: a
// monotonic clock in nanoseconds and the CPU's spin-loop hint.
#pragma once

#include <chrono>
#include <cstdint>

namespace kvmgpu {

inline uint64_t now_ns() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

inline void cpu_relax() {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
}

} // namespace kvmgpu
