#include "kvmtool-gpu/cli/bench_calls_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/calls_report.h"
#include "kvmtool-gpu/bench/idle_cpu_probe.h"
#include "kvmtool-gpu/bench/guest_bench_run.h"
#include "kvmtool-gpu/bench/native_cuda.h"
#include "kvmtool-gpu/cli/arg_parser.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/kvm/open_kvm.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"

namespace kvmgpu::bench {

using cli::UsageError;

const char* bench_calls_help() {
    static std::string text;
    if (text.empty())
        text = std::string(
                   "usage: kvmtool-gpu bench calls [options]\n"
                   "\n"
                   "The cost of a virtual CUDA call: asynchronous empty-kernel launches, a loop of\n"
                   "launches and small copies, and synchronous round trips (launch + synchronize;\n"
                   "a small copy), from a guest per doorbell with batching (deferred submission)\n"
                   "off and on, against the same calls made natively first in the same run.\n"
                   "Guest wall times are the guest's TSC (emulator time where KVM emulates guest\n"
                   "code); CUDA events on the stream give the span the VMM and GPU needed.\n"
                   "\n"
                   "  --quick             n 100, iters 20, one run each (nested CI)\n"
                   "  --doorbells LIST    adaptive,trap,ioeventfd,poll (default all; one VM each)\n"
                   "  --batching LIST     off,on (default both)\n"
                   "  --n N               asynchronous calls per run (default 1000)\n"
                   "  --iters N           round trips per run (default 200)\n"
                   "  --copy-bytes N      size of the small copies (default 8)\n"
                   "  --reps N            runs per measurement, median reported (default 3)\n"
                   "  --wakes N           wake_launch: round trips after a pause, per run (default 20)\n"
                   "  --pause-ms N        ... the pause before each (default 10)\n"
                   "  --idle-s N          then the guest idles N s while the VMM's CPU (but its vCPU's)\n"
                   "                      and the GPU worker's is measured (default 10; 0: skip)\n"
                   "  --no-native         skip the native baseline\n"
                   "  --out DIR           writes DIR/calls.{csv,json,md,png} (default bench-results)\n"
                   "  --plot-script PATH  plot_bench.py (default: plots/ beside the binary or one folder up)\n"
                   "  --mem SIZE          guest RAM (default 128M)\n"
                   "  --pages 4K|2M|1G    host pages backing guest RAM (default 4K)\n"
                   "  --timeout S         per guest run (default 900)\n") +
               cli::vgpu_options_help() +
               "  (--doorbell is ignored here: --doorbells picks them)\n"
               "\n"
               "Exit status: 0 when every planned measurement completed (or its backend does not\n"
               "offer it: not_supported), 1 otherwise, 2 for\n"
               "bad usage or a set-up error.\n";
    return text.c_str();
}

namespace {

CallsSweep sweep_from_args(const cli::ArgParser& p) {
    CallsSweep s = p.has("quick") ? quick_calls_sweep() : CallsSweep{};
    if (auto v = p.get("doorbells")) {
        s.doorbells.clear();
        for (const auto& d : split_list(*v)) {
            vgpu::DoorbellMode m;
            if (vgpu::parse_doorbell(d, &m)) s.doorbells.push_back(m);
            else throw UsageError("--doorbells '" + d + "': expected adaptive, trap, ioeventfd or poll");
        }
    }
    if (auto v = p.get("batching")) {
        const auto b = split_list(*v);
        s.batching_off = std::count(b.begin(), b.end(), "off");
        s.batching_on = std::count(b.begin(), b.end(), "on");
        if (b.empty() || b.size() != size_t(s.batching_off) + s.batching_on)
            throw UsageError("--batching: expected off,on");
    }
    if (auto v = p.get("n")) s.n = cli::parse_u64(*v, "--n");
    if (auto v = p.get("iters")) s.iters = cli::parse_u64(*v, "--iters");
    if (auto v = p.get("copy-bytes")) s.copy_bytes = cli::parse_u64(*v, "--copy-bytes");
    if (auto v = p.get("reps")) s.reps = cli::parse_u64(*v, "--reps");
    if (auto v = p.get("wakes")) s.wakes = cli::parse_u64(*v, "--wakes");
    if (auto v = p.get("pause-ms")) s.pause_ms = cli::parse_u64(*v, "--pause-ms");
    if (auto v = p.get("idle-s")) s.idle_s = cli::parse_u64(*v, "--idle-s");
    if (s.n == 0 || s.iters == 0 || s.reps == 0 || s.reps > 15 || s.copy_bytes == 0 || s.copy_bytes > 4096 ||
        s.wakes == 0 || s.pause_ms > 10000 || s.idle_s > 3600)
        throw UsageError("need --n, --iters, --wakes >= 1, --reps 1..15, --copy-bytes 1..4096, --pause-ms <= 10000, "
                         "--idle-s <= 3600");
    if (s.doorbells.empty()) throw UsageError("--doorbells: empty list");
    return s;
}

// The median (by wall time) of reps runs, after a warm-up run.
template <class Run>
NativeTiming median_of(uint64_t reps, Run run) {
    NativeTiming warm = run();
    if (!warm.ok()) return warm;
    std::vector<NativeTiming> runs;
    for (uint64_t i = 0; i < reps; ++i) {
        runs.push_back(run());
        if (!runs.back().ok()) return runs.back();
    }
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.wall_ns < b.wall_ns; });
    return runs[runs.size() / 2];
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
// run_native_in_child); meta says what it was, or why there is none.
void run_native(const CallsSweep& s, bool host_forced, std::vector<CallsResult>* out, BenchMeta* meta) {
    const auto lines = run_native_in_child(meta, [&](BenchMeta* m, const NativeEmit& emit) {
        auto cuda = open_native_baseline(
            "calls", host_forced, "--vgpu host: the guests use the host backend (CPU reference kernels, not a GPU)",
            [](NativeCuda& c, std::string* why) { return c.prepare_calls(why); },
            "CUDA Driver API in a process of its own, own context, one stream, pinned host memory", m);
        if (!cuda) return;
        std::vector<CallsResult> mine;
        for (const auto& key : plan_native_calls()) {
            const uint64_t calls = s.calls_of(key.metric);
            const NativeTiming t = median_of(s.reps, [&] {
                if (key.metric == "wake_launch") return cuda->wake_launches(calls, s.pause_ms);
                if (key.metric == "graph_launch") return cuda->graph_launches(calls, kGraphChain);
                if (key.metric == "alloc_async") return cuda->alloc_async_round_trips(calls, kAllocAsyncBytes);
                if (key.metric == "managed_launch") return cuda->managed_launches(calls, kManagedLaunchBytes);
                if (key.metric == "launch") return cuda->launches(calls, false, s.copy_bytes);
                if (key.metric == "loop") return cuda->launches(calls, true, s.copy_bytes);
                if (key.metric == "sync_launch") return cuda->sync_launches(calls);
                return cuda->sync_copies(calls, key.metric == "sync_copy_htod", s.copy_bytes);
            });
            mine.push_back(CallsResult{key, calls, s.reps, t.event_ns, t.wall_ns, 0, 0, t.status});
            std::printf("  [native] %s: %s\n", key.metric.c_str(), result_text(mine, mine.back()).c_str());
            std::fflush(stdout);
            emit(calls_line(mine.back()));
        }
    });
    for (const auto& line : lines)
        if (auto l = parse_bench_line(line, {"CALLS"}))
            if (auto r = calls_from_line(*l, "-")) out->push_back(*r);
}

} // namespace

int bench_calls_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"doorbells", "batching", "n", "iters", "copy-bytes", "reps", "wakes", "pause-ms", "idle-s", "out",
                                    "plot-script", "mem", "pages", "timeout", "guest"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    cli::ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_calls_help(), stdout);
        return 0;
    }
    const CallsSweep sweep = sweep_from_args(p);
    const auto vms = plan_calls_vms(sweep);
    const auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench calls needs a vGPU (--vgpu none makes no sense here)");
    VmOptions base;
    base.guest_path = locate_guest(p.get_or("guest", "calls"));
    base.ram_bytes = cli::parse_size(p.get_or("mem", "128M"), "--mem");
    if (!memmap::parse_page_size(p.get_or("pages", "4K"), &base.host_pages))
        throw UsageError("--pages: expected 4K, 2M or 1G");
    base.timeout_s = cli::parse_seconds(p.get_or("timeout", "900"), "--timeout");

    BenchMeta meta = start_bench("calls", args, "guest TSC around the calls and the synchronize, per call");
    meta.set("poll_spin_us", std::to_string(vgpu_cfg->options.poll_spin_us));
    meta.set("poll_max_us", std::to_string(vgpu_cfg->options.poll_max_us));
    meta.set("vgpu_doorbell_default", vgpu::to_string(vgpu::VgpuOptions{}.doorbell));
    meta.set("vgpu_gpu_worker", vgpu::to_string(vgpu_cfg->worker));
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe());

    KvmSystem kvm = open_kvm();
    std::vector<CallsResult> results;
    if (!p.has("no-native"))
        run_native(sweep, vgpu_cfg->backend == vgpu::BackendChoice::Host, &results, &meta);
    else
        meta.set("native_baseline", "none (--no-native)");

    const std::string out_dir = p.get_or("out", "bench-results");
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
        const CallsVm& plan = vms[v];
        const std::string bell = vgpu::to_string(plan.doorbell);
        VgpuConfig cfg = *vgpu_cfg;
        cfg.options.doorbell = plan.doorbell;
        VmOptions o = base;
        o.cmdline = plan.cmdline;
        std::printf("bench calls: [vm %zu/%zu] doorbell %s, %zu measurements\n", v + 1, vms.size(), bell.c_str(),
                    plan.expected.size());
        std::fflush(stdout);
        std::vector<CallsResult> got;
        auto on_line = [&](const BenchLine& l) {
            if (l.tag != "CALLS") return;
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
            if (l.tag == "CALLS-IDLE" || l.tag == "CALLS-CPU-BEGIN") return idle.begin();
            // The probe's window ends: its share of one core, as percent text
            // ("" when /proc could not be read), recorded under `key`.
            auto cpu_percent = [&](const std::string& key, const char* format) {
                const double share = idle.end();
                char text[32] = "";
                if (share >= 0) std::snprintf(text, sizeof text, format, share * 100);
                meta.set(key, share < 0 ? "unknown" : text);
                return std::string(share < 0 ? "?" : text);
            };
            if (l.tag == "CALLS-CPU-END") {
                const std::string pct = cpu_percent(
                    "vmm_worker_cpu_pct." + bell + "." + l.get("metric") + "." + l.get("batching"), "%.1f");
                std::printf("  during %s (batching %s): VMM (but its vCPU) and GPU worker used %s%% of one core\n",
                            l.get("metric").c_str(), l.get("batching").c_str(), pct.c_str());
                return;
            }
            if (l.tag == "CALLS-IDLE-DONE") {
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
            kvm, o, cfg, {"CALLS", "CALLS-PLAN", "CALLS-DONE", "CALLS-IDLE", "CALLS-IDLE-DONE", "CALLS-CPU-BEGIN", "CALLS-CPU-END"}, on_any, &outcome);
        record_guest_execution(&meta, outcome.result.execution);
        if (meta.get("vgpu_backend").empty() && !outcome.backend.empty()) meta.set("vgpu_backend", outcome.backend);
        // A row the backend does not offer (managed memory where device memory
        // cannot sit at guest addresses) is reported as such, not a failure.
        all_ok &= append_planned(&results, plan.expected, got,
                                 [](const CallsResult& r) { return r.ok() || r.status == "not_supported"; });
        if (!failure.empty()) {
            all_ok = false;
            std::printf("bench calls: [vm %zu/%zu] FAILED: %s\n", v + 1, vms.size(), failure.c_str());
        }
        save({});
    }
    write_bench_outputs(out_dir, "calls", calls_csv(results), calls_json(results, meta),
                        calls_markdown(results, meta), p.get_or("plot-script", ""));
    std::printf("bench calls: %s\n", all_ok ? "every guest measurement completed"
                                            : "FAILED: some guest measurements did not complete (see above)");
    return all_ok ? 0 : 1;
}

} // namespace kvmgpu::bench
