#include "kvmtool-gpu/cli/bench_p2p_command.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "kvmtool-gpu/abi/p2p_rules.h"
#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/guest_bench_run.h"
#include "kvmtool-gpu/bench/native_devices.h"
#include "kvmtool-gpu/bench/native_p2p.h"
#include "kvmtool-gpu/bench/p2p_report.h"
#include "kvmtool-gpu/bench/topology_probe.h"
#include "kvmtool-gpu/cli/arg_parser.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/kvm/open_kvm.h"
#include "kvmtool-gpu/vmm/guest_locator.h"

namespace kvmgpu::bench {

using cli::UsageError;

const char* bench_p2p_help() {
    static std::string text;
    if (text.empty())
        text = std::string(
                   "usage: kvmtool-gpu bench p2p [options]\n"
                   "\n"
                   "Copies between a VM's devices, as NVIDIA's p2pBandwidthLatencyTest measures them: for\n"
                   "every ordered pair (the diagonal too), unidirectional and bidirectional\n"
                   "cuMemcpyPeerAsync bandwidth per size and one-word latency, peer access off and then on\n"
                   "(where the devices allow it), natively (a process of its own with a context per device\n"
                   "on the same GPUs) and in a guest (the p2p program, timed by the guest), in the same run.\n"
                   "Prints the matrices with the guest's share of native, and where each pair of devices\n"
                   "lives (same GPU, NVLink NVn, PCIe, no peer access).\n"
                   "\n"
                   "  --sizes LIST        copy sizes, multiples of 4 up to 1G\n"
                   "                      (default 4K,16K,64K,256K,1M,4M,16M,64M,256M,1G)\n"
                   "  --quick             sizes 4K,64K,1M, 1 trial, 200 latency copies (CI on the host backend)\n"
                   "  --trials N          trials per measurement, median reported (default 3)\n"
                   "  --iters N           one-word copies per latency trial (default 1000)\n"
                   "  --access LIST       off,on (default both)\n"
                   "  --no-native         skip the native side\n"
                   "  --out DIR           writes DIR/p2p.{csv,json,md} (default bench-results)\n"
                   "  --mem SIZE          guest RAM (default 256M)\n"
                   "  --pages 4K|2M|1G    host pages backing guest RAM (default 4K)\n"
                   "  --timeout S         the guest run (default 600)\n"
                   "  --gpus LIST         as below; default 0,0 (two devices on GPU 0); 0,1 for two GPUs\n") +
               cli::vgpu_options_help() +
               "  (--gpu-mem-quota defaults to what two buffers of the largest size per device need)\n"
               "\n"
               "Exit status: 0 when every copy was measured on the guest's side, 1 otherwise,\n"
               "2 for bad usage or a set-up error.\n";
    return text.c_str();
}

namespace {

P2pPlan plan_from(const cli::ArgParser& p) {
    P2pPlan plan;
    const bool quick = p.has("quick");
    const std::string sizes = p.get_or("sizes", quick ? "4K,64K,1M" : "4K,16K,64K,256K,1M,4M,16M,64M,256M,1G");
    for (const auto& s : split_list(sizes)) {
        const uint64_t b = cli::parse_size(s, "--sizes");
        if (b == 0 || b % 4 != 0 || b > kP2pMaxBytes) throw UsageError("--sizes: each a multiple of 4 up to 1G");
        plan.sizes.push_back(b);
    }
    if (plan.sizes.empty() || plan.sizes.size() > kP2pMaxSizes)
        throw UsageError("--sizes: 1 to " + std::to_string(kP2pMaxSizes) + " sizes");
    const uint64_t trials = cli::parse_u64(p.get_or("trials", quick ? "1" : "3"), "--trials");
    if (trials == 0 || trials > kP2pMaxTrials) throw UsageError("--trials: 1.." + std::to_string(kP2pMaxTrials));
    plan.trials = static_cast<unsigned>(trials);
    plan.iters = cli::parse_u64(p.get_or("iters", quick ? "200" : "1000"), "--iters");
    if (plan.iters == 0 || plan.iters > kP2pMaxLatencyIters)
        throw UsageError("--iters: 1.." + std::to_string(kP2pMaxLatencyIters));
    plan.access_off = plan.access_on = false;
    for (const auto& a : split_list(p.get_or("access", "off,on"))) {
        if (a == "off") plan.access_off = true;
        else if (a == "on") plan.access_on = true;
        else throw UsageError("--access: off, on or off,on");
    }
    if (!plan.access_off && !plan.access_on) throw UsageError("--access: off, on or off,on");
    return plan;
}

std::string guest_cmdline(const P2pPlan& plan) {
    std::string sizes, access;
    for (uint64_t b : plan.sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(b);
    if (plan.access_off) access = "off";
    if (plan.access_on) access += access.empty() ? "on" : ",on";
    return "sizes=" + sizes + " trials=" + std::to_string(plan.trials) + " iters=" + std::to_string(plan.iters) +
           " access=" + access;
}

} // namespace

int bench_p2p_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"sizes", "trials", "iters", "access", "out", "mem", "pages", "timeout", "guest"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    cli::ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_p2p_help(), stdout);
        return 0;
    }
    const P2pPlan plan = plan_from(p);
    auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench p2p needs a vGPU (--vgpu none makes no sense here)");
    if (!p.get("gpus")) vgpu_cfg->gpus = {0, 0};
    if (vgpu_cfg->gpus.size() > kP2pMaxDevices)
        throw UsageError("--gpus: at most " + std::to_string(kP2pMaxDevices) + " devices for bench p2p");
    const uint64_t largest = *std::max_element(plan.sizes.begin(), plan.sizes.end());
    if (!p.get("gpu-mem-quota"))
        vgpu_cfg->options.device_mem_quota = std::max<uint64_t>(2 * largest * vgpu_cfg->gpus.size() + (64ull << 20),
                                                                1ull << 30);
    VmOptions vm;
    vm.guest_path = locate_guest(p.get_or("guest", "p2p"));
    vm.ram_bytes = cli::parse_size(p.get_or("mem", "256M"), "--mem");
    if (!memmap::parse_page_size(p.get_or("pages", "4K"), &vm.host_pages))
        throw UsageError("--pages: expected 4K, 2M or 1G");
    vm.timeout_s = cli::parse_seconds(p.get_or("timeout", "600"), "--timeout");
    vm.cmdline = guest_cmdline(plan);

    BenchMeta meta = start_bench("p2p", args, "guest TSC around the one-word round trips; copies timed by CUDA events");
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
    std::vector<P2pSample> samples;
    const auto lines = run_native_on_gpus(&meta, p.has("no-native"), vgpu_cfg->backend == vgpu::BackendChoice::Host,
                                          vgpu_cfg->gpus.front(),
                                          [&](const NativeEmit& emit) { return native_p2p(vgpu_cfg->gpus, plan, emit); });
    for (const auto& line : lines)
        if (auto l = parse_bench_line(line, {"p2p:"}))
            if (auto s = p2p_from_line(*l, "native")) samples.push_back(*s);

    const std::string out_dir = p.get_or("out", "bench-results");
    std::printf("bench p2p: guest (%s)\n", vm.cmdline.c_str());
    std::fflush(stdout);
    size_t failed = 0, got = 0;
    GuestBenchOutcome outcome;
    const std::string failure = run_guest_bench_checked(
        kvm, vm, *vgpu_cfg, {"p2p:"}, [&](const BenchLine& l) {
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
