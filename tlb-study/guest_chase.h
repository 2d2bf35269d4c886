// The guest half of the sweep: boots guest-stub's pointer_chase in a
// VirtualMachine for one (guest pages x host backing) combination, reads
// its CHASE lines from the console, and takes KVM's binary statistics for
// the VM and its vCPU before and after the run (plus PMU counters on the
// vCPU thread, where the host has them).
//
// Whether these latencies mean anything as TLB costs depends on what runs
// guest code: with hardware VMX/SVM they include the 2-D (guest x EPT/NPT)
// page walk, under kvm-pvm the guest tables shadowed by KVM; if guest code
// were emulated they would measure the emulator, which each run measures
// (GuestChaseResult::execution).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvmtool-gpu/kvm/kvm_stats.h"
#include "kvmtool-gpu/vmm/execution_mode.h"
#include "tlb-study/native_chase.h"
#include "tlb-study/sweep_plan.h"

namespace kvmgpu {
class KvmSystem;
}

namespace tlbstudy {

// One `CHASE ws=... pages=... nodes=... accesses=... reps=... tsc=...
// tsc_min=... tsc_khz=...` line from the guest (keys in any order; extra
// keys ignored; ws, accesses, tsc and tsc_khz required and > 0 except tsc).
struct ChaseLine {
    uint64_t ws = 0, nodes = 0, accesses = 0, reps = 0, tsc = 0, tsc_min = 0, tsc_khz = 0;
    std::string pages;
    double ns_per_access() const;     // median repetition
    double ns_min_per_access() const; // fastest repetition
};
std::optional<ChaseLine> parse_chase_line(std::string_view line);

struct GuestChaseParams {
    std::string guest_path;  // pointer_chase.elf
    uint64_t accesses = 1ull << 13;
    uint32_t reps = 3;
    uint64_t seed = 1;
    double timeout_s = 600;
};

// The guest command line for one combination.
std::string guest_cmdline(const GuestRun& run, const GuestChaseParams& p);

struct GuestChaseResult {
    GuestRun run;
    bool ok = false;
    std::string error;            // set when !ok (or the run was skipped: run.skip)
    std::vector<ChaseLine> lines;
    kvmgpu::KvmStatsDiff vm_stats, vcpu_stats;
    std::string stats_note;       // why statistics are missing, if they are
    std::vector<CounterValue> counters; // whole run, vCPU thread
    double wall_s = 0;            // VM creation to exit
    uint64_t exits = 0;
    kvmgpu::ExecutionMode execution; // how the guest's code ran (measured)
};

// Never throws: set-up failures (pool, image, KVM) end up in error.
GuestChaseResult run_guest_chase(const kvmgpu::KvmSystem& kvm, const GuestRun& run, const GuestChaseParams& params,
                                 PerfCounterSet* counters, const Progress& progress);

} // namespace tlbstudy
