// The native side of the benches that give a VM several devices (bench
// multigpu, bench p2p): none with --no-native or --vgpu host (meta says
// why), else the measurement in a child process (run_native_in_child),
// with the GPU's name and the driver version in meta and the measurement's
// verdict as "native_baseline".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/native_cuda.h"

namespace kvmgpu::bench {

// measure() runs in the child and returns "" or why not everything was
// measured. Returns the lines it emitted.
std::vector<std::string> run_native_on_gpus(BenchMeta* meta, bool no_native, bool host_forced, int first_gpu,
                                            const std::function<std::string(const NativeEmit&)>& measure);

// "0,1,1,1"
std::string gpu_list_text(const std::vector<int>& gpus);

} // namespace kvmgpu::bench
