// What a faulting VM (bench share --intruder fault) cost the other members
// of its group, from their SHARE: lines: how many lost their work (under
// MPS a fault is every client's), the calls that failed, the longest time
// from a first failure to a unit that passed again, and whether each one's
// data check passed at the end. Pure: no KVM, no GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kvmtool-gpu/bench/bench_line.h"

namespace kvmgpu::bench {

struct FaultImpact {
    unsigned members = 0;       // the others
    unsigned reported = 0;      // ... that printed their SHARE: line
    unsigned affected = 0;      // ... whose work failed at least once
    unsigned checks_passed = 0; // ... that passed their checks (the guest's exit status)
    uint64_t failed_calls = 0;
    uint64_t lost_ms_max = 0;
    // One member: its SHARE: line (nullopt when it printed none) and whether
    // it passed its checks.
    void add(const std::optional<BenchLine>& report, bool passed);
    // "2 of 3 lost their work: 14 calls failed, at most 812 ms lost; checks passed 3 of 3"
    std::string text() const;
};

// One member's own figures, for its row: "failed=3 lost_ms=812" ("" when none failed).
std::string member_fault_note(const BenchLine& report);

} // namespace kvmgpu::bench
