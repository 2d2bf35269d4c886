#include "kvmtool-gpu/bench/share_bench.h"

#include <cstdio>
#include <set>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/native_share.h"
#include "kvmtool-gpu/bench/share_fault.h"
#include "kvmtool-gpu/bench/share_report.h"
#include "kvmtool-gpu/kvm/open_kvm.h"

namespace kvmgpu::bench {

namespace {

// What a misbehaving VM's SHARE: line says of its role: the fault's status
// and recovery, the storm's kicks, or (quota) its data check.
std::string intruder_note(const BenchLine& report) {
    std::string what;
    for (const char* key : {"status", "recovered", "kicks"})
        if (report.find(key)) what += std::string(what.empty() ? "" : " ") + key + "=" + report.get(key);
    if (what.empty()) what = "check=" + report.get("check");
    return report.get("role") + ": " + what;
}

bool under_mps(const VgpuConfig& c) { return c.share && c.share->mode() == GpuShareMode::Mps; }

void print_group(const std::vector<ShareRow>& rows, const std::string& side, const std::string& work, unsigned n) {
    const ShareSummary s = summarize_share(rows, side, work, n);
    if (s.members == 0) return;
    if (!s.complete()) {
        std::printf("  [%s] %s, N=%u: FAILED (%u of %u measured)\n", side.c_str(), work.c_str(), n, s.measured, n);
    } else {
        std::printf("  [%s] %s, N=%u: aggregate %.3g %s, per member %.3g .. %.3g, Jain %.3f, latency p50 %.1f us, "
                    "p99 %.1f us\n",
                    side.c_str(), work.c_str(), n, s.aggregate, share_unit(work), s.min, s.max, s.jain.value_or(0),
                    s.lat_p50_ns / 1000.0, s.lat_p99_ns / 1000.0);
    }
    std::fflush(stdout);
}

} // namespace

int run_share_bench(const ShareBenchPlan& plan) {
    const std::vector<unsigned>& counts = plan.counts;
    const std::vector<std::string>& work_list = plan.works;
    const uint64_t size = plan.size, order = plan.order;
    const SmallWork& small = plan.small;
    const ShareWindow& window = plan.window;
    const uint64_t guest_seconds = plan.guest_seconds;
    const std::string& intruder = plan.intruder;
    const VgpuConfig* vgpu_cfg = &plan.vgpu;
    const VmOptions& base = plan.vm;

    BenchMeta meta = start_bench("share", plan.args, "each member counts its own latency samples; rates come from "
                                                "counters read by the VMM over a common window");
    meta.set("vgpu_gpu_worker", vgpu::to_string(vgpu_cfg->worker));
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe());
    char window_text[128];
    std::snprintf(window_text, sizeof window_text,
                  "%.2f s after all ready + %.2f s settle; guests work until it ends (at most %llu s)", window.window_s,
                  window.settle_s, static_cast<unsigned long long>(guest_seconds));
    meta.set("window", window_text);
    meta.set("bandwidth_unit", "SIZE=" + size_text(size) + " host->device and back, pinned and pageable");
    meta.set("compute_unit", "matmul order " + std::to_string(order));
    meta.set("small_unit", std::to_string(small.batch) + " x matmul order " + std::to_string(small.order) + " (" +
                               std::to_string(small.blocks()) + " blocks each), one synchronize");
    if (!intruder.empty()) meta.set("intruder", intruder + " (the last VM of every group of 2 or more)");

    std::vector<ShareRow> rows;
    const std::string& out_dir = plan.out_dir;
    auto save = [&] { write_result_files(out_dir, "share", share_csv(rows), share_json(rows, meta), share_markdown(rows, meta)); };
    bool all_ok = true;
    const bool host_forced = vgpu_cfg->backend == vgpu::BackendChoice::Host;
    if (!plan.native) {
        meta.set("native_baseline", "none (--no-native)");
    } else if (host_forced) {
        meta.set("native_baseline", "none (--vgpu host: the guests use the host backend, not a GPU)");
    } else {
        std::set<unsigned> native_counts(counts.begin(), counts.end());
        native_counts.insert(1);
        std::string why;
        for (const auto& work : work_list)
            for (unsigned n : native_counts) {
                if (!why.empty()) break;
                std::printf("bench share: native, %s, %u process%s\n", work.c_str(), n, n == 1 ? "" : "es");
                std::fflush(stdout);
                NativeShareWork nw{work, size, static_cast<unsigned>(order)};
                if (work == "small") nw.order = small.order, nw.batch = small.batch;
                nw.env = vgpu_cfg->share->client_env(); // under MPS, native processes are its clients too
                auto got = run_native_share(nw, n, window, &why);
                rows.insert(rows.end(), got.begin(), got.end());
                print_group(rows, "native", work, n);
            }
        meta.set("native_baseline", why.empty() ? std::string("CUDA Driver API, N processes ") +
                                                      (under_mps(*vgpu_cfg) ? "all clients of the run's MPS server"
                                                                               : "each with its own context")
                                                : "incomplete: " + why);
        meta.native_baseline = why.empty();
        if (!why.empty()) std::printf("bench share: native: %s\n", why.c_str());
        save();
    }

    KvmSystem kvm = open_kvm();
    for (const auto& work : work_list)
        for (unsigned n : counts) {
            std::printf("bench share: guests, %s, %u VM%s at once\n", work.c_str(), n, n == 1 ? "" : "s");
            std::fflush(stdout);
            std::string cmdline = "work=" + work + " seconds=" + std::to_string(guest_seconds) + " size=" +
                                  std::to_string(size) + " n=" +
                                  std::to_string(work == "small" ? small.order : order);
            if (work == "small") cmdline += " batch=" + std::to_string(small.batch);
            const bool with_intruder = !intruder.empty() && n >= 2;
            if (with_intruder && intruder == "fault") cmdline += " recover=1"; // under MPS the fault is everyone's
            std::vector<std::string> cmdlines(n, cmdline);
            if (with_intruder) cmdlines.back() += " role=" + intruder + " fault_after_ms=" +
                                                  std::to_string(static_cast<uint64_t>((window.settle_s + window.window_s / 2) * 1000));
            std::vector<SharedGuest> guests;
            try {
                guests = run_shared_guests(kvm, base, *vgpu_cfg, cmdlines, window);
            } catch (const std::exception&) {
                // A VM or vGPU that cannot be set up (no GPU for --vgpu cuda, too
                // little memory) will not be set up for the next N either.
                save();
                throw;
            }
            FaultImpact impact;
            for (unsigned i = 0; i < n; ++i) {
                const SharedGuest& g = guests[i];
                record_guest_execution(&meta, g.result.execution);
                ShareRow r{"guest", work, n, i};
                r.rate = work == "bandwidth" ? g.bytes_per_s / 1e9 : g.launches_per_s;
                if (g.report) {
                    r.lat_p50_ns = g.report->u64("lat_p50_ns").value_or(0);
                    r.lat_p99_ns = g.report->u64("lat_p99_ns").value_or(0);
                }
                r.status = g.status;
                if (with_intruder && intruder == "fault" && i != n - 1) {
                    impact.add(g.report, g.result.passed());
                    if (g.report) r.note = member_fault_note(*g.report);
                }
                if (with_intruder && i == n - 1) {
                    // Judged by its own checks only: a fault ends its work early.
                    r.side = "intruder";
                    r.status = g.result.passed() ? "ok" : g.status;
                    if (g.report) r.note = intruder_note(*g.report);
                    if (intruder == "fault") r.note += "; the others: " + impact.text();
                }
                if (!r.ok()) {
                    all_ok = false;
                    std::printf("bench share: VM %u: %s\n", i, r.status_text().c_str());
                    for (const auto& l : g.tail) std::printf("    %s\n", l.c_str());
                }
                rows.push_back(r);
            }
            print_group(rows, "guest", work, n);
            if (with_intruder && intruder == "fault")
                std::printf("  [guest] %s, N=%u, the %u others of the faulting VM: %s\n", work.c_str(), n, n - 1,
                            impact.text().c_str());
            save();
        }
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe()); // as it ended: MPS may have been lost
    return finish_bench(out_dir, "share", share_csv(rows), share_json(rows, meta), share_markdown(rows, meta),
                        plan.plot_script, all_ok, "every VM and process measured, every guest's checks passed",
                        "see above");
}

} // namespace kvmgpu::bench
