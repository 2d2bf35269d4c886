#include "kvmtool-gpu/bench/bandwidth_bench.h"

#include <algorithm>
#include <cstdio>

#include "kvmtool-gpu/abi/console_tags.h"
#include "kvmtool-gpu/bench/bandwidth_report.h"
#include "kvmtool-gpu/bench/guest_bench_run.h"
#include "kvmtool-gpu/bench/native_child.h"
#include "kvmtool-gpu/bench/native_cuda.h"
#include "kvmtool-gpu/kvm/open_kvm.h"

namespace kvmgpu::bench {

namespace {

// The native side's bound: the full sweep with --trials 5 takes minutes on the H100.
constexpr double kBandwidthNativeBoundS = 1800;

void progress(const char* fmt, const std::string& a, const std::string& b) {
    std::printf(fmt, a.c_str(), b.c_str());
    std::fflush(stdout);
}

std::string result_text(const std::vector<BandwidthResult>& all, const BandwidthResult& r) {
    if (!r.ok()) return r.status;
    std::string s = rate_text(r.gbps()) + (r.clock == "tsc" ? " GB/s by guest TSC" : " GB/s");
    if (auto q = ratio_to_native(all, r, "pinned")) s += " (" + percent_text(*q) + " of native pinned)";
    return s;
}

// " trial 2/3" with several trials, else nothing: progress lines.
std::string trial_text(const BandwidthKey& k) {
    return k.trials > 1 ? " trial " + std::to_string(k.trial) + "/" + std::to_string(k.trials) : "";
}

// The native baseline, into *out, measured in a child process (see
// native_child.h); meta says what it was, or why there is none.
void run_native(const BandwidthSweep& s, bool host_forced, std::vector<BandwidthResult>* out, BenchMeta* meta) {
    const uint64_t max_bytes = *std::max_element(s.sizes.begin(), s.sizes.end());
    const auto rows = native_rows_in_child<BandwidthResult>(meta, kBandwidthNativeBoundS, [&](BenchMeta* m) {
        auto cuda = open_native_baseline(
            "bandwidth", host_forced, "--vgpu host: the guests use the host backend (CPU memcpy, not a GPU)",
            [&](NativeCuda& c, std::string* why) { return c.prepare_copies(max_bytes, why); },
            "CUDA Driver API in a process of its own: pageable = malloc, pinned = cuMemHostAlloc", m);
        std::vector<BandwidthResult> mine;
        if (!cuda) return mine;
        if (const double ms = cuda->register_ms_per_gib(); ms > 0)
            m->set("native_register_ms_per_gib", number_text(ms) + " (cuMemHostRegister of the malloc'd buffer)");
        const auto plan = plan_native_copies(s);
        for (const auto& n : plan) {
            const auto timings = cuda->copy(n.key.dir == "htod", n.key.kind, n.key.bytes, n.reps, s.trials);
            for (size_t i = 0; i < timings.size(); ++i) {
                const NativeTiming& t = timings[i];
                BandwidthKey k = n.key;
                k.trial = static_cast<unsigned>(i + 1);
                mine.push_back(BandwidthResult{k, n.reps, t.event_ns, t.wall_ns, 1, t.status});
                std::printf("  [native %zu/%zu] %s %s %s%s: %s\n", mine.size(), plan.size() * s.trials,
                            k.dir.c_str(), k.kind.c_str(), size_text(k.bytes).c_str(), trial_text(k).c_str(),
                            result_text(mine, mine.back()).c_str());
                std::fflush(stdout);
            }
        }
        return mine;
    });
    out->insert(out->end(), rows.begin(), rows.end());
}

} // namespace

int run_bandwidth_bench(const BandwidthBenchPlan& plan) {
    const BandwidthSweep& sweep = plan.sweep;
    const std::vector<BandwidthVm>& vms = plan.vms;
    const VgpuConfig* vgpu_cfg = &plan.vgpu;
    const std::string& guest = plan.guest_path;
    const double timeout = plan.timeout_s;
    const std::string& out_dir = plan.out_dir;

    BenchMeta meta = start_bench("bandwidth", plan.args, "guest TSC around submission and synchronization");
    meta.set("vgpu_doorbell", vgpu::to_string(vgpu_cfg->options.doorbell));
    meta.set("vgpu_gpu_worker", vgpu::to_string(vgpu_cfg->worker));
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe());

    KvmSystem kvm = open_kvm(); // before the native run: no KVM, no point
    std::vector<BandwidthResult> results;
    if (plan.native)
        run_native(sweep, vgpu_cfg->backend == vgpu::BackendChoice::Host, &results, &meta);
    else
        meta.set("native_baseline", "none (--no-native)");

    // Rewritten as results come in: a run stopped by a time limit keeps them.
    auto save = [&](const std::vector<BandwidthResult>& in_progress) {
        std::vector<BandwidthResult> all = results;
        all.insert(all.end(), in_progress.begin(), in_progress.end());
        write_result_files(out_dir, "bandwidth", bandwidth_csv(all), bandwidth_json(all, meta), bandwidth_markdown(all, meta));
    };
    save({});
    size_t total = 0, done = 0;
    for (const auto& vm : vms) total += vm.expected.size();
    bool all_ok = true;
    std::string backend;
    for (size_t v = 0; v < vms.size(); ++v) {
        const BandwidthVm& vm = vms[v];
        VmOptions o;
        o.guest_path = guest;
        o.ram_bytes = plan.ram_bytes.value_or(vm.ram_bytes);
        o.host_pages = vm.host_pages;
        o.cmdline = vm.cmdline;
        o.timeout_s = timeout;
        std::printf("bench bandwidth: [vm %zu/%zu] %s, RAM %llu MiB, %zu measurements%s\n", v + 1, vms.size(),
                    vm.label().c_str(), static_cast<unsigned long long>(o.ram_bytes >> 20), vm.expected.size(),
                    sweep.trials > 1 ? (" (" + std::to_string(vm.expected.size() / sweep.trials) + " cells x " +
                                        std::to_string(sweep.trials) + " trials)").c_str()
                                     : "");
        std::fflush(stdout);
        const std::string hps(memmap::to_string(vm.host_pages));
        std::vector<BandwidthResult> got;
        uint64_t guest_planned = 0;
        bool checks_ok = true;
        auto on_line = [&](const BenchLine& l) {
            if (l.tag == KVMGPU_TAG_BW_PLAN) guest_planned = l.u64("measurements").value_or(0);
            if (l.tag == KVMGPU_TAG_BW_REG) { // the registered kind's cuMemHostRegister, guest TSC
                const double bytes = static_cast<double>(l.u64("bytes").value_or(0));
                const double ms = static_cast<double>(l.u64("register_ns").value_or(0)) / 1e6;
                meta.set("guest_register_ms_per_gib hp" + hps + " gp" + l.get("gpages"),
                         bytes > 0 ? number_text(ms * (1ull << 30) / bytes) + " (" + number_text(ms) + " ms for " +
                                         size_text(static_cast<uint64_t>(bytes)) + ", device address " +
                                         l.get("device_address") + ", " + l.get("status") + ")"
                                   : l.get("status"));
            }
            if (l.tag == KVMGPU_TAG_BW_CHECK && l.get("status") != "ok" && l.get("status") != "not_supported") {
                checks_ok = false;
                progress("  check FAILED: %s %s\n", l.get("kind") + " " + l.get("strategy"), l.get("status"));
            }
            if (l.tag != KVMGPU_TAG_BW) return;
            auto r = bandwidth_from_line(l, hps);
            if (!r) return progress("  malformed line from the guest%s%s\n", "", "");
            got.push_back(*r);
            std::vector<BandwidthResult> view = results;
            view.push_back(*r);
            std::printf("  [%zu/%zu] %s %s %s%s: %s%s\n", ++done, total, r->key.mode().c_str(), r->key.dir.c_str(),
                        size_text(r->key.bytes).c_str(), trial_text(r->key).c_str(), result_text(view, *r).c_str(),
                        r->attempts > 1 ? (" (attempts " + std::to_string(r->attempts) + ")").c_str() : "");
            std::fflush(stdout);
            save(got);
        };
        GuestBenchOutcome outcome;
        o.ram_bytes = std::max(o.ram_bytes, vm.ram_bytes);
        std::string failure =
            run_guest_bench_checked(kvm, o, *vgpu_cfg, {KVMGPU_TAG_BW, KVMGPU_TAG_BW_PLAN, KVMGPU_TAG_BW_CHECK, KVMGPU_TAG_BW_REG, KVMGPU_TAG_BW_DONE}, on_line,
                                    &outcome);
        record_guest_execution(&meta, outcome.result.execution);
        if (backend.empty() && !outcome.backend.empty()) {
            backend = outcome.backend;
            meta.set("vgpu_backend", backend);
            meta.set("vgpu_zero_copy", outcome.zero_copy ? "yes" : "no (guest RAM not registered)");
        }
        if (guest_planned != 0 && guest_planned != vm.expected.size())
            failure += " (guest planned " + std::to_string(guest_planned) + " measurements, driver " +
                       std::to_string(vm.expected.size()) + ")";
        all_ok &= append_planned(&results, vm.expected, got, [](const BandwidthResult& r) {
            return r.status == "ok" || r.status == "not_supported";
        });
        all_ok &= checks_ok;
        if (!failure.empty()) {
            all_ok = false;
            std::printf("bench bandwidth: [vm %zu/%zu] FAILED: %s\n", v + 1, vms.size(), failure.c_str());
        }
        save({});
    }
    return finish_bench(out_dir, "bandwidth", bandwidth_csv(results), bandwidth_json(results, meta),
                        bandwidth_markdown(results, meta), plan.plot_script, all_ok, "every guest measurement completed",
                        "some guest measurements did not complete (see above)");
}

} // namespace kvmgpu::bench
