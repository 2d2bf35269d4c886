#include "tlb-study/tlb_study.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>

#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/kvm/open_kvm.h"
#include "kvmtool-gpu/kvm/kvm_system.h"

namespace tlbstudy {

std::vector<std::string> StudyResults::failures() const {
    std::vector<std::string> f;
    for (const auto& n : native)
        if (!n.error.empty()) f.push_back("native " + std::string(memmap::to_string(n.pages)) + ": " + n.error);
    for (const auto& g : guest)
        if (g.run.skip.empty() && !g.ok) f.push_back(g.run.label() + ": " + g.error);
    for (const auto& b : backing)
        if (!b.error.empty()) f.push_back("backing " + std::string(memmap::to_string(b.pages)) + ": " + b.error);
    return f;
}

StudyResults run_study(const StudyOptions& opts, const Progress& progress) {
    const auto t0 = std::chrono::steady_clock::now();
    auto say = [&](const std::string& s) {
        if (progress) progress(s);
    };
    StudyResults res;
    res.machine = kvmgpu::collect_machine_info();

    PerfCounterSet counters;
    res.machine.pmu = counters.available();
    res.machine.pmu_note = counters.reason();
    for (const auto& e : counters.describe_events())
        res.machine.pmu_events += (res.machine.pmu_events.empty() ? "" : ", ") + e;
    res.counter_metrics = counters.metrics();
    say(counters.available() ? "PMU counters: " + res.machine.pmu_events : counters.reason());

    HostResources host = host_resources();
    std::optional<kvmgpu::KvmSystem> kvm;
    std::string guest_path;
    if (opts.sweep.guest) {
        try {
            kvm.emplace(kvmgpu::open_kvm());
            guest_path = kvmgpu::locate_guest(opts.guest);
            host.kvm = true;
        } catch (const std::exception& e) {
            host.kvm_reason = e.what();
        }
    }
    res.machine.kvm = kvm.has_value();
    res.machine.kvm_note = host.kvm_reason;
    if (!res.machine.kvm) res.machine.guest_code_emulated = false; // nothing ran in a guest
    res.plan = plan_sweep(opts.sweep, host);

    res.native_params = {res.plan.reps, res.plan.accesses, opts.seed};
    for (const auto& run : res.plan.native) {
        if (!run.skip.empty()) say("native " + std::string(memmap::to_string(run.pages)) + ": " + run.skip);
        else if (!run.note.empty()) say("native " + std::string(memmap::to_string(run.pages)) + ": " + run.note);
    }
    res.native = run_native_sweep(res.plan.native, res.native_params, &counters, progress);

    say("VMM translation: GuestMemory::translate, scatter-gather coalescing, backing create/prefault");
    res.translate = bench_translate(res.plan.translate_lookups, res.plan.reps, opts.seed);
    res.sg = bench_sg(res.plan.sg_transfers, res.plan.reps, opts.seed);
    for (PageSize p : res.plan.backing_pages) {
        res.backing.push_back(bench_backing(p, res.plan.backing_bytes, opts.sweep.quick ? 2 : 3));
        const auto& b = res.backing.back();
        char line[200];
        if (b.error.empty())
            std::snprintf(line, sizeof line, "backing %s %s (%s): mmap %.3f ms, prefault %.1f ms, first touch %.1f ms",
                          std::string(memmap::to_string(p)).c_str(), size_label(b.bytes).c_str(), b.source.c_str(),
                          b.create_ms, b.prefault_ms, b.touch_ms);
        else
            std::snprintf(line, sizeof line, "backing %s: %s", std::string(memmap::to_string(p)).c_str(),
                          b.error.c_str());
        say(line);
    }

    res.guest_params = {guest_path, res.plan.guest_accesses, res.plan.reps, opts.seed, opts.guest_timeout_s};
    if (!res.plan.guest_skip.empty()) say(res.plan.guest_skip);
    if (kvm) {
        say("guest runs: " + res.machine.kvm_flavor);
        for (const auto& run : res.plan.guest) {
            if (!run.skip.empty()) say(run.label() + ": " + run.skip);
            else say(run.label() + ": " + std::to_string(run.ws.size()) + " working sets in " +
                     size_label(run.ram_bytes) + " of guest RAM" + (run.note.empty() ? "" : " (" + run.note + ")"));
            res.guest.push_back(run_guest_chase(*kvm, run, res.guest_params, &counters, progress));
            const auto& g = res.guest.back();
            if (run.skip.empty() && !g.ok) say(run.label() + ": FAILED: " + g.error);
            if (g.execution.measured && (res.machine.guest_code.rfind("not measured", 0) == 0 ||
                                         (g.execution.emulated() && !res.machine.guest_code_emulated))) {
                res.machine.guest_code = g.execution.describe();
                say(run.label() + ": guest code " + res.machine.guest_code);
            }
            res.machine.guest_code_emulated = res.machine.guest_code_emulated || g.execution.emulated();
        }
    }
    res.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

} // namespace tlbstudy
