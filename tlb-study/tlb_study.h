// One whole TLB / translation-cost study, as `kvmtool-gpu bench tlb` runs
// it: machine description, PMU detection, the plan, the native chase per
// backing, the VMM's translation work, and the guest chase per
// (guest pages x host backing) when /dev/kvm opens. Results only; the
// report writers (report.h) turn them into CSV, JSON and markdown.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tlb-study/guest_chase.h"
#include "kvmtool-gpu/vmm/machine_info.h"
#include "tlb-study/native_chase.h"
#include "tlb-study/sweep_plan.h"
#include "tlb-study/translation_bench.h"

namespace tlbstudy {

struct StudyOptions {
    SweepOptions sweep;
    uint64_t seed = 1;
    double guest_timeout_s = 600;
    std::string guest = "pointer_chase"; // guest image name or path
};

struct StudyResults {
    kvmgpu::MachineInfo machine;
    SweepPlan plan;
    ChaseParams native_params;
    GuestChaseParams guest_params;
    std::vector<NativeChaseResult> native;
    std::vector<GuestChaseResult> guest;
    std::vector<TranslateResult> translate;
    std::vector<SgResult> sg;
    std::vector<BackingResult> backing;
    std::vector<std::string> counter_metrics; // columns with values (empty without a PMU)
    double elapsed_s = 0;
    // Errors that make the run a failure (not skips): native or guest runs
    // that were planned but did not complete.
    std::vector<std::string> failures() const;
};

StudyResults run_study(const StudyOptions& opts, const Progress& progress);

} // namespace tlbstudy
