#include "kvmtool-gpu/bench/share_fault.h"

#include <algorithm>

namespace kvmgpu::bench {

void FaultImpact::add(const std::optional<BenchLine>& report, bool passed) {
    ++members;
    if (passed) ++checks_passed;
    if (!report) return;
    ++reported;
    const uint64_t failed = report->u64("failed").value_or(0);
    failed_calls += failed;
    if (failed) ++affected;
    lost_ms_max = std::max(lost_ms_max, report->u64("lost_ms").value_or(0));
}

std::string FaultImpact::text() const {
    std::string t = affected == 0 ? "none lost its work"
                                  : std::to_string(affected) + " of " + std::to_string(members) +
                                        " lost their work: " + std::to_string(failed_calls) + " calls failed, at most " +
                                        std::to_string(lost_ms_max) + " ms lost";
    if (reported < members) t += " (" + std::to_string(members - reported) + " reported nothing)";
    return t + "; checks passed " + std::to_string(checks_passed) + " of " + std::to_string(members);
}

std::string member_fault_note(const BenchLine& report) {
    const uint64_t failed = report.u64("failed").value_or(0);
    if (failed == 0) return "";
    return "failed=" + std::to_string(failed) + " lost_ms=" + std::to_string(report.u64("lost_ms").value_or(0));
}

} // namespace kvmgpu::bench
