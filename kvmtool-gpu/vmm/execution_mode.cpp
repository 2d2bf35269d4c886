#include "kvmtool-gpu/vmm/execution_mode.h"

#include <cstdio>

namespace kvmgpu {

double ExecutionMode::ns_per_iteration() const {
    return loop_iterations ? static_cast<double>(window_ns) / static_cast<double>(loop_iterations) : 0.0;
}

bool ExecutionMode::emulated() const {
    if (!measured) return false;
    if (emulated_instructions) return *emulated_instructions >= loop_iterations;
    return ns_per_iteration() > kEmulatedNsPerIteration;
}

std::string ExecutionMode::label() const {
    if (!measured) return "not measured";
    return emulated() ? "emulated" : "native";
}

std::string ExecutionMode::describe() const {
    if (!measured) return "not measured (the guest did not run the runtime's calibration loop)";
    char buf[192];
    if (emulated_instructions)
        std::snprintf(buf, sizeof buf, "%s (calibration loop: %llu iterations, %.2f ns each, %llu instructions emulated by KVM)",
                      label().c_str(), static_cast<unsigned long long>(loop_iterations), ns_per_iteration(),
                      static_cast<unsigned long long>(*emulated_instructions));
    else
        std::snprintf(buf, sizeof buf, "%s (calibration loop: %llu iterations, %.2f ns each; no KVM statistics, judged by time)",
                      label().c_str(), static_cast<unsigned long long>(loop_iterations), ns_per_iteration());
    return buf;
}

ExecutionProbe::ExecutionProbe(KvmStatsReader vcpu_stats) : stats_(std::move(vcpu_stats)) {}

std::optional<uint64_t> ExecutionProbe::emulated_so_far() {
    if (!stats_.available()) return std::nullopt;
    const auto snap = stats_.snapshot();
    if (!snap) return std::nullopt;
    const auto it = snap->find("insn_emulation");
    if (it == snap->end() || it->second.values.empty()) return std::nullopt;
    return it->second.values[0];
}

void ExecutionProbe::begin(uint64_t iterations) {
    if (iterations == 0) return;
    open_ = true;
    iterations_ = iterations;
    emulated_at_begin_ = emulated_so_far();
    began_ = std::chrono::steady_clock::now();
}

void ExecutionProbe::end() {
    if (!open_) return;
    const auto now = std::chrono::steady_clock::now();
    open_ = false;
    mode_ = ExecutionMode{};
    mode_.measured = true;
    mode_.loop_iterations = iterations_;
    mode_.window_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - began_).count());
    const auto emulated_now = emulated_so_far();
    if (emulated_at_begin_ && emulated_now && *emulated_now >= *emulated_at_begin_)
        mode_.emulated_instructions = *emulated_now - *emulated_at_begin_;
}

} // namespace kvmgpu
