#include "kvmtool-gpu/bench/multigpu_bench.h"

#include <cstdio>

#include "kvmtool-gpu/abi/console_tags.h"
#include "kvmtool-gpu/bench/guest_bench_run.h"
#include "kvmtool-gpu/bench/multigpu_report.h"
#include "kvmtool-gpu/bench/native_devices.h"
#include "kvmtool-gpu/bench/native_multigpu.h"
#include "kvmtool-gpu/bench/topology_probe.h"
#include "kvmtool-gpu/kvm/open_kvm.h"

namespace kvmgpu::bench {

namespace {

void print_summary(const std::vector<MultigpuRow>& rows, uint64_t n, const char* side) {
    const MultigpuSummary s = summarize(rows, n, side);
    if (!s.gg_ms || !s.gh_ms) return;
    const auto over = s.over_5t();
    std::printf("  [%s] order %llu: G_G %.3f ms, G_H %.3f ms, G_H - G_G %.3f ms, T %.3f ms, (G_H - G_G)/5T %s\n",
                side, static_cast<unsigned long long>(n), *s.gg_ms, *s.gh_ms, *s.difference_ms(), s.t_ms.value_or(0),
                over ? std::to_string(*over).c_str() : "-");
    std::fflush(stdout);
}

} // namespace

int run_multigpu_bench(const MultigpuBenchPlan& plan) {
    const std::vector<uint64_t>& orders = plan.orders;
    const uint64_t reps = plan.reps, samples = plan.samples;
    const VgpuConfig* vgpu_cfg = &plan.vgpu;
    const VmOptions& base = plan.vm;

    BenchMeta meta = start_bench("multigpu", plan.args, "guest TSC around each run (compute, gather, add), median of reps");
    meta.set("gpus", gpu_list_text(vgpu_cfg->gpus));
    // What the three gathered products cross, from the driver's peer
    // attributes and NVML's links (probed in a child process).
    const GpuTopology topo = probe_topology(vgpu_cfg->gpus, vgpu_cfg->backend);
    const GatherLabel label = multigpu_gather_label(topo, vgpu_cfg->gpus);
    meta.set("setup", label.summary);
    std::printf("bench multigpu: %s\n", label.summary.c_str());
    for (size_t k = 0; k < label.roles.size(); ++k) {
        std::printf("bench multigpu: %s\n", label.roles[k].c_str());
        meta.set("gather_role_" + std::to_string(k + 1), label.roles[k]);
    }
    const auto pairs = device_pair_lines(topo, vgpu_cfg->gpus);
    for (size_t k = 0; k < pairs.size(); ++k) {
        std::printf("bench multigpu: %s\n", pairs[k].c_str());
        meta.set("pair_" + std::to_string(k), pairs[k]);
    }
    meta.set("vgpu_gpu_worker", vgpu::to_string(vgpu_cfg->worker));
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe());

    KvmSystem kvm = open_kvm();
    std::vector<MultigpuRow> rows = run_native_on_gpus<MultigpuRow>(
        &meta, !plan.native, vgpu_cfg->backend == vgpu::BackendChoice::Host, vgpu_cfg->gpus.front(),
        [&](std::vector<MultigpuRow>* out) {
            return native_multigpu(vgpu_cfg->gpus, orders, static_cast<unsigned>(reps), out);
        });
    for (uint64_t n : orders) print_summary(rows, n, "native");

    const std::string& out_dir = plan.out_dir;
    auto save = [&] {
        write_result_files(out_dir, "multigpu", multigpu_csv(rows), multigpu_json(rows, meta),
                           multigpu_markdown(rows, meta));
    };
    save();
    bool all_ok = true;
    for (uint64_t n : orders) {
        VmOptions o = base;
        o.cmdline = "order=" + std::to_string(n) + " reps=" + std::to_string(reps) + " samples=" + std::to_string(samples);
        std::printf("bench multigpu: guest, order %llu\n", static_cast<unsigned long long>(n));
        std::fflush(stdout);
        size_t got = 0;
        auto on_line = [&](const BenchLine& l) {
            if (auto r = multigpu_from_line(l, "guest")) {
                rows.push_back(*r);
                ++got;
                all_ok &= r->check != "FAIL";
            }
        };
        GuestBenchOutcome outcome;
        const std::string failure = run_guest_bench_checked(kvm, o, *vgpu_cfg, {KVMGPU_TAG_MULTIGPU}, on_line, &outcome);
        record_guest_execution(&meta, outcome.result.execution);
        if (meta.get("vgpu_backend").empty() && !outcome.backend.empty()) meta.set("vgpu_backend", outcome.backend);
        if (!failure.empty() || got != 3) {
            all_ok = false;
            std::printf("bench multigpu: order %llu FAILED: %s\n", static_cast<unsigned long long>(n),
                        failure.empty() ? "the guest did not report every mode" : failure.c_str());
        }
        print_summary(rows, n, "guest");
        save();
    }
    return finish_bench(out_dir, "multigpu", multigpu_csv(rows), multigpu_json(rows, meta), multigpu_markdown(rows, meta),
                        plan.plot_script, all_ok, "every order measured, the guest's checks passed", "see above");
}

} // namespace kvmgpu::bench
