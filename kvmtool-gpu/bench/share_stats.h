// The figures of `bench share` (several VMs, or several native processes,
// on one GPU at once): each member's rate over one common window, and per
// group the aggregate, the spread and Jain's fairness index. Pure: no KVM,
// no GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvmgpu::bench {

// One member (a VM or a native process) of one group.
struct ShareRow {
    std::string side;  // "guest", "native", or "intruder" (a misbehaving VM, not summarised)
    std::string work;  // "bandwidth" (rate in GB/s), "compute" or "small" (kernels/s)
    unsigned members = 0; // VMs or processes running at once
    unsigned member = 0;  // this one's index
    double rate = 0;
    uint64_t lat_p50_ns = 0, lat_p99_ns = 0; // its small synchronous call
    std::string status = "ok"; // else what went wrong
    std::string note;          // a misbehaving VM's own report of its role, e.g. "storm: kicks=7"
    bool ok() const { return status == "ok"; }
    // The status with the note in brackets, for tables and the CSV.
    std::string status_text() const { return note.empty() ? status : status + " (" + note + ")"; }
};

// Jain's fairness index (sum x)^2 / (n * sum x^2): 1 when every member got
// the same, 1/n when one got everything. nullopt for no members or all zero.
std::optional<double> jain_index(const std::vector<double>& rates);

struct ShareSummary {
    std::string side, work;
    unsigned members = 0;  // rows of the group
    unsigned measured = 0; // ... with status ok
    double aggregate = 0, min = 0, max = 0;
    std::optional<double> jain;
    uint64_t lat_p50_ns = 0; // median over members of their medians
    uint64_t lat_p99_ns = 0; // worst member's p99
    bool complete() const { return members != 0 && measured == members; }
};

// The summary of the rows of one (side, work, members) group; members = 0
// in the result when there is no such row. Rows of another side (e.g. a
// misbehaving VM's, side "intruder") are not counted.
ShareSummary summarize_share(const std::vector<ShareRow>& rows, const std::string& side, const std::string& work,
                             unsigned members);

// "GB/s" for bandwidth, "kernels/s" for compute and small.
const char* share_unit(const std::string& work);

} // namespace kvmgpu::bench
