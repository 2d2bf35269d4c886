// Boots one benchmark guest with a vGPU and hands every result line it
// prints (tags of the caller's choosing) to a callback as it arrives, so a
// sweep shows progress while the guest runs. Other console lines are kept
// (the last few) to explain a failure.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "kvmtool-gpu/bench/bench_line.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_counters.h"
#include "kvmtool-gpu/kvm/kvm_system.h"
#include "kvmtool-gpu/vmm/run_result.h"
#include "kvmtool-gpu/vmm/vgpu_attach.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::bench {

struct GuestBenchOutcome {
    RunResult result;
    std::string backend;      // the vGPU backend's description
    std::string backend_note; // why that backend
    bool zero_copy = false;   // guest RAM registered (device-mapped)
    double registration_ms = 0;
    vgpu::VgpuCounterSnapshot counters;
    std::vector<BenchLine> lines;   // the result lines, in order
    std::deque<std::string> tail;   // the last other console lines
};

// vm.console is replaced. Throws what VirtualMachine / attach_vgpu throw
// for set-up failures; a guest failure is in result.
GuestBenchOutcome run_guest_bench(const KvmSystem& kvm, VmOptions vm, const VgpuConfig& vgpu,
                                  const std::vector<std::string_view>& tags,
                                  const std::function<void(const BenchLine&)>& on_line);

// run_guest_bench with a set-up exception or a failed run turned into a
// one-line reason; "" when the guest passed. *out gets what there is.
std::string run_guest_bench_checked(const KvmSystem& kvm, VmOptions vm, const VgpuConfig& vgpu,
                                    const std::vector<std::string_view>& tags,
                                    const std::function<void(const BenchLine&)>& on_line, GuestBenchOutcome* out);

// One line for a failed run: outcome, exit code, detail and the console tail.
std::string describe_failure(const GuestBenchOutcome& o);

} // namespace kvmgpu::bench
