// The two primitives every bounded spin-then-sleep wait here uses: the
// monotonic clock (clock.h) and the CPU's spin-loop hint.
#pragma once

#include "kvmtool-gpu/util/clock.h"

namespace kvmgpu {

inline void cpu_relax() {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
}

} // namespace kvmgpu
