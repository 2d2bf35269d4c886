// How a guest's own instructions executed in one run — natively or through
// KVM's instruction emulator — measured, never assumed from the KVM module's
// name. The guest runtime opens a calibration window (platform_abi.h, CPU
// control), runs KVMGPU_CALIBRATION_LOOPS dec/jnz iterations and closes it;
// the VMM times the window and counts the instructions KVM emulated in it
// (the vCPU's binary statistic insn_emulation). An emulated loop shows its
// 2N instructions there; a native one only the two MMIO writes around it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "kvmtool-gpu/kvm/kvm_stats.h"

namespace kvmgpu {

struct ExecutionMode {
    bool measured = false; // the guest ran the calibration loop
    uint64_t loop_iterations = 0;
    uint64_t window_ns = 0;
    std::optional<uint64_t> emulated_instructions; // absent without KVM statistics

    // Emulated if KVM emulated at least one instruction per iteration; with
    // no statistics, if an iteration took longer than kEmulatedNsPerIteration.
    bool emulated() const;
    double ns_per_iteration() const;
    // "native", "emulated" or "not measured".
    std::string label() const;
    // label() and the figures behind it, one line.
    std::string describe() const;

    // Hardware runs a dec/jnz iteration in about 1 ns, KVM's emulator in
    // about 2 us (KVM-PVM.md): anything between tells them apart.
    static constexpr double kEmulatedNsPerIteration = 50.0;
};

// The run loop's side of the calibration window. Guest writes arrive in any
// order and with any value: an end without a begin is ignored, a second
// begin restarts the window, a count of 0 never opens one.
class ExecutionProbe {
public:
    explicit ExecutionProbe(KvmStatsReader vcpu_stats);
    void begin(uint64_t iterations);
    void end();
    const ExecutionMode& mode() const { return mode_; }

private:
    std::optional<uint64_t> emulated_so_far();

    KvmStatsReader stats_;
    bool open_ = false;
    uint64_t iterations_ = 0;
    std::optional<uint64_t> emulated_at_begin_;
    std::chrono::steady_clock::time_point began_;
    ExecutionMode mode_;
};

} // namespace kvmgpu
