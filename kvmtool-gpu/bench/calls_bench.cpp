#include "kvmtool-gpu/bench/calls_bench.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "kvmtool-gpu/abi/console_tags.h"
#include "kvmtool-gpu/bench/calls_report.h"
#include "kvmtool-gpu/bench/guest_bench_run.h"
#include "kvmtool-gpu/bench/idle_cpu_probe.h"
#include "kvmtool-gpu/bench/native_child.h"
#include "kvmtool-gpu/bench/native_cuda.h"
#include "kvmtool-gpu/kvm/open_kvm.h"

namespace kvmgpu::bench {

namespace {

// The native side's bound: its full sweep takes well under a minute on the H100.
constexpr double kCallsNativeBoundS = 900;

// reps runs after a warm-up run, sorted by wall time (the median, the
// fastest and the 90th percentile are read off them); a failed run alone.
template <class Run>
std::vector<NativeTiming> sorted_runs(uint64_t reps, Run run) {
    NativeTiming warm = run();
    if (!warm.ok()) return {warm};
    std::vector<NativeTiming> runs;
    for (uint64_t i = 0; i < reps; ++i) {
        runs.push_back(run());
        if (!runs.back().ok()) return {runs.back()};
    }
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.wall_ns < b.wall_ns; });
    return runs;
}

std::string result_text(const std::vector<CallsResult>& all, const CallsResult& r) {
    if (!r.ok()) return r.status;
    std::string s = us_text(r.wall_per_call_ns()) + " us/call wall, " + us_text(r.event_per_call_ns()) + " events";
    if (r.key.source == "guest") {
        if (is_async_metric(r.key.metric)) {
            if (auto q = rate_ratio(all, r, false)) s += " (" + percent_text(*q) + " of native rate)";
        } else if (auto x = round_trip_excess_ns(all, r)) {
            s += " (+" + us_text(*x) + " us over native)";
        }
        s += ", doorbells " + std::to_string(r.doorbells);
    }
    return s;
}

// The native baseline, into *out, measured in a child process (see
// native_child.h); meta says what it was, or why there is none.
void run_native(const CallsSweep& s, bool host_forced, std::vector<CallsResult>* out, BenchMeta* meta) {
    const auto rows = native_rows_in_child<CallsResult>(meta, kCallsNativeBoundS, [&](BenchMeta* m) {
        auto cuda = open_native_baseline(
            "calls", host_forced, "--vgpu host: the guests use the host backend (CPU reference kernels, not a GPU)",
            [](NativeCuda& c, std::string* why) { return c.prepare_calls(why); },
            "CUDA Driver API in a process of its own, own context, one stream, pinned host memory", m);
        std::vector<CallsResult> mine;
        if (!cuda) return mine;
        for (const auto& key : plan_native_calls()) {
            const uint64_t calls = s.calls_of(key.metric);
            const std::vector<NativeTiming> runs = sorted_runs(s.reps, [&] {
                if (key.metric == "wake_launch") return cuda->wake_launches(calls, s.pause_ms);
                if (key.metric == "graph_launch") return cuda->graph_launches(calls, kGraphChain);
                if (key.metric == "alloc_async") return cuda->alloc_async_round_trips(calls, kAllocAsyncBytes);
                if (key.metric == "managed_launch") return cuda->managed_launches(calls, kManagedLaunchBytes);
                if (key.metric == "launch") return cuda->launches(calls, false, s.copy_bytes);
                if (key.metric == "loop") return cuda->launches(calls, true, s.copy_bytes);
                if (key.metric == "sync_launch") return cuda->sync_launches(calls);
                return cuda->sync_copies(calls, key.metric == "sync_copy_htod", s.copy_bytes);
            });
            const NativeTiming& t = runs[runs.size() / 2];
            const uint64_t p90 = runs[percentile_index(runs.size(), 90)].wall_ns;
            mine.push_back(CallsResult{key, calls, s.reps, t.event_ns, t.wall_ns, runs.front().wall_ns, p90, 0, 0,
                                       t.status});
            std::printf("  [native] %s: %s\n", key.metric.c_str(), result_text(mine, mine.back()).c_str());
            std::fflush(stdout);
        }
        return mine;
    });
    out->insert(out->end(), rows.begin(), rows.end());
}

} // namespace

int run_calls_bench(const CallsBenchPlan& plan) {
    const CallsSweep& sweep = plan.sweep;
    const auto vms = plan_calls_vms(sweep);
    const VgpuConfig* vgpu_cfg = &plan.vgpu;
    const VmOptions& base = plan.vm;

    BenchMeta meta = start_bench("calls", plan.args, "guest TSC around the calls and the synchronize, per call");
    meta.set("poll_spin_us", std::to_string(vgpu_cfg->options.poll_spin_us));
    meta.set("poll_max_us", std::to_string(vgpu_cfg->options.poll_max_us));
    meta.set("vgpu_doorbell_default", vgpu::to_string(vgpu::VgpuOptions{}.doorbell));
    meta.set("vgpu_gpu_worker", vgpu::to_string(vgpu_cfg->worker));
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe());

    KvmSystem kvm = open_kvm();
    std::vector<CallsResult> results;
    if (plan.native)
        run_native(sweep, vgpu_cfg->backend == vgpu::BackendChoice::Host, &results, &meta);
    else
        meta.set("native_baseline", "none (--no-native)");

    const std::string& out_dir = plan.out_dir;
    // Rewritten as results come in: a run stopped by a time limit keeps them.
    auto save = [&](const std::vector<CallsResult>& in_progress) {
        std::vector<CallsResult> all = results;
        all.insert(all.end(), in_progress.begin(), in_progress.end());
        write_result_files(out_dir, "calls", calls_csv(all), calls_json(all, meta), calls_markdown(all, meta));
    };
    save({});
    bool all_ok = true;
    size_t total = 0, done = 0;
    for (const auto& vm : vms) total += vm.expected.size();
    for (size_t v = 0; v < vms.size(); ++v) {
        const CallsVm& vm = vms[v];
        const std::string bell = vgpu::to_string(vm.doorbell);
        VgpuConfig cfg = *vgpu_cfg;
        cfg.options.doorbell = vm.doorbell;
        VmOptions o = base;
        o.cmdline = vm.cmdline;
        std::printf("bench calls: [vm %zu/%zu] doorbell %s, %zu measurements\n", v + 1, vms.size(), bell.c_str(),
                    vm.expected.size());
        std::fflush(stdout);
        std::vector<CallsResult> got;
        auto on_line = [&](const BenchLine& l) {
            if (l.tag != KVMGPU_TAG_CALLS) return;
            auto r = calls_from_line(l, bell);
            if (!r) return void(std::printf("  malformed line from the guest\n"));
            got.push_back(*r);
            std::vector<CallsResult> view = results;
            view.push_back(*r);
            std::printf("  [%zu/%zu] %s %s: %s\n", ++done, total, r->key.mode().c_str(), r->key.metric.c_str(),
                        result_text(view, *r).c_str());
            std::fflush(stdout);
            save(got);
        };
        // The guest idles between CALLS-IDLE and CALLS-IDLE-DONE; the console
        // calls on_line on the vCPU thread, which is this one.
        IdleCpuProbe idle(gettid());
        auto on_any = [&](const BenchLine& l) {
            if (l.tag == KVMGPU_TAG_CALLS_IDLE || l.tag == KVMGPU_TAG_CALLS_CPU_BEGIN) return idle.begin();
            // The probe's window ends: its share of one core, as percent text
            // ("" when /proc could not be read), recorded under `key`.
            auto cpu_percent = [&](const std::string& key, const char* format) {
                const double share = idle.end();
                char text[32] = "";
                if (share >= 0) std::snprintf(text, sizeof text, format, share * 100);
                meta.set(key, share < 0 ? "unknown" : text);
                return std::string(share < 0 ? "?" : text);
            };
            if (l.tag == KVMGPU_TAG_CALLS_CPU_END) {
                const std::string pct = cpu_percent(
                    "vmm_worker_cpu_pct." + bell + "." + l.get("metric") + "." + l.get("batching"), "%.1f");
                std::printf("  during %s (batching %s): VMM (but its vCPU) and GPU worker used %s%% of one core\n",
                            l.get("metric").c_str(), l.get("batching").c_str(), pct.c_str());
                return;
            }
            if (l.tag == KVMGPU_TAG_CALLS_IDLE_DONE) {
                const std::string pct = cpu_percent("idle_vmm_worker_cpu_pct." + bell, "%.3f");
                std::printf("  idle guest, %s s: VMM (but its vCPU) and GPU worker used %s%% of one core\n",
                            l.get("wall_ns").empty() ? "?" : std::to_string(std::stoull(l.get("wall_ns")) / 1'000'000'000).c_str(),
                            pct.c_str());
                return;
            }
            on_line(l);
        };
        GuestBenchOutcome outcome;
        const std::string failure = run_guest_bench_checked(
            kvm, o, cfg, {KVMGPU_TAG_CALLS, KVMGPU_TAG_CALLS_PLAN, KVMGPU_TAG_CALLS_DONE, KVMGPU_TAG_CALLS_IDLE, KVMGPU_TAG_CALLS_IDLE_DONE, KVMGPU_TAG_CALLS_CPU_BEGIN, KVMGPU_TAG_CALLS_CPU_END}, on_any, &outcome);
        record_guest_execution(&meta, outcome.result.execution);
        if (meta.get("vgpu_backend").empty() && !outcome.backend.empty()) meta.set("vgpu_backend", outcome.backend);
        // A row the backend does not offer (managed memory where device memory
        // cannot sit at guest addresses) is reported as such, not a failure.
        all_ok &= append_planned(&results, vm.expected, got,
                                 [](const CallsResult& r) { return r.ok() || r.status == "not_supported"; });
        if (!failure.empty()) {
            all_ok = false;
            std::printf("bench calls: [vm %zu/%zu] FAILED: %s\n", v + 1, vms.size(), failure.c_str());
        }
        save({});
    }
    return finish_bench(out_dir, "calls", calls_csv(results), calls_json(results, meta), calls_markdown(results, meta),
                        plan.plot_script, all_ok, "every guest measurement completed",
                        "some guest measurements did not complete (see above)");
}

} // namespace kvmgpu::bench
