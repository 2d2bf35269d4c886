// The native side of `bench multigpu`: the multigpu guest's work (E = A*B +
// C*D, four roles on the given GPUs, gathered by peer copies or through
// pinned host memory) done by this process with the CUDA Driver API, timed
// with the host's steady clock as the guest times itself with its TSC. It
// prints what the guest prints, so one parser reads both:
//   multigpu: order=N t_ms=...
//   multigpu: order=N mode=gg reps=R total_ms=... gather_ms=...
// The inputs are constant (the timings do not depend on the values); the
// guest checks its result, this does not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/native_cuda.h"

namespace kvmgpu::bench {

// Runs in this process: call it through run_native_on_gpus. Returns "" or
// why nothing (or not everything) was measured.
std::string native_multigpu(const std::vector<int>& gpus, const std::vector<uint64_t>& orders, unsigned reps,
                            const NativeEmit& emit);

} // namespace kvmgpu::bench
