#include "kvmtool-gpu/bench/p2p_bench.h"

#include <cstdio>

#include "kvmtool-gpu/abi/console_tags.h"
#include "kvmtool-gpu/bench/guest_bench_run.h"
#include "kvmtool-gpu/bench/native_devices.h"
#include "kvmtool-gpu/bench/p2p_report.h"
#include "kvmtool-gpu/bench/topology_probe.h"
#include "kvmtool-gpu/kvm/open_kvm.h"

namespace kvmgpu::bench {

int run_p2p_bench(const P2pBenchPlan& plan) {
    const VgpuConfig* vgpu_cfg = &plan.vgpu;
    const VmOptions& vm = plan.vm;

    BenchMeta meta = start_bench("p2p", plan.args, "guest TSC around the one-word round trips; copies timed by CUDA events");
    meta.set("gpus", gpu_list_text(vgpu_cfg->gpus));
    meta.set("vgpu_gpu_worker", vgpu::to_string(vgpu_cfg->worker));
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe());
    meta.set("vgpu_doorbell", vgpu::to_string(vgpu_cfg->options.doorbell));
    const GpuTopology topo = probe_topology(vgpu_cfg->gpus, vgpu_cfg->backend);
    const auto pairs = device_pair_lines(topo, vgpu_cfg->gpus);
    for (size_t k = 0; k < pairs.size(); ++k) {
        std::printf("bench p2p: %s\n", pairs[k].c_str());
        meta.set("pair_" + std::to_string(k), pairs[k]);
    }

    KvmSystem kvm = open_kvm();
    std::vector<P2pSample> samples = run_native_on_gpus<P2pSample>(
        &meta, !plan.native, vgpu_cfg->backend == vgpu::BackendChoice::Host, vgpu_cfg->gpus.front(),
        [&](std::vector<P2pSample>* out) { return native_p2p(vgpu_cfg->gpus, plan.copies, out); });

    const std::string& out_dir = plan.out_dir;
    std::printf("bench p2p: guest (%s)\n", vm.cmdline.c_str());
    std::fflush(stdout);
    size_t failed = 0, got = 0;
    GuestBenchOutcome outcome;
    const std::string failure = run_guest_bench_checked(
        kvm, vm, *vgpu_cfg, {KVMGPU_TAG_P2P}, [&](const BenchLine& l) {
            if (auto s = p2p_from_line(l, "guest")) {
                samples.push_back(*s);
                ++got;
                failed += s->kind != "peer" && s->status != "ok";
            }
        },
        &outcome);
    record_guest_execution(&meta, outcome.result.execution);
    if (!outcome.backend.empty()) meta.set("vgpu_backend", outcome.backend);
    std::printf("bench p2p: native side: %s; guest side: vGPU backend %s\n", meta.get("native_baseline").c_str(),
                outcome.backend.empty() ? "(none: the guest did not start)" : outcome.backend.c_str());
    const auto cells = p2p_cells(samples);
    const std::string md = p2p_markdown(cells, samples, meta);
    write_result_files(out_dir, "p2p", p2p_csv(cells), p2p_json(cells, meta), md);
    std::fputs(md.c_str(), stdout);
    std::printf("bench p2p: wrote %s/p2p.{csv,json,md}\n", out_dir.c_str());
    const bool ok = failure.empty() && failed == 0 && got > 0;
    if (!failure.empty()) std::printf("bench p2p: guest FAILED: %s\n", failure.c_str());
    if (failed) std::printf("bench p2p: %zu guest measurement(s) failed (status= in the table)\n", failed);
    std::printf("bench p2p: %s\n", ok ? "every copy measured" : "FAILED: see above");
    return ok ? 0 : 1;
}

} // namespace kvmgpu::bench
