// The native side of `bench multigpu`: the multigpu guest's work (E = A*B +
// C*D, four roles on the given GPUs, gathered by peer copies or through
// pinned host memory) done by this process with the CUDA Driver API, timed
// with the host's steady clock as the guest times itself with its TSC. Its
// rows are the guest's "multigpu:" lines' (multigpu_report.h), to the
// microsecond as the guest prints them.
// The inputs are constant (the timings do not depend on the values); the
// guest checks its result, this does not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/multigpu_report.h"

namespace kvmgpu::bench {

// Runs in this process: call it through run_native_on_gpus. Appends its
// rows to *out; returns "" or why nothing (or not everything) was measured.
std::string native_multigpu(const std::vector<int>& gpus, const std::vector<uint64_t>& orders, unsigned reps,
                            std::vector<MultigpuRow>* out);

} // namespace kvmgpu::bench
