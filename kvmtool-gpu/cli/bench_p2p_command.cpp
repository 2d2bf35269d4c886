// `kvmtool-gpu bench p2p`: copies between a VM's devices (every ordered
// pair, uni- and bidirectional, one-word latency, peer access off and on),
// natively and in a guest in the same run, as p2pBandwidthLatencyTest's
// matrices with the guest's share of native.
// Flags only: they become a plan that the bench runs; the command registers
// itself under its name (bench/bench_commands.h).

#include <algorithm>
#include <cstdio>
#include <set>

#include "kvmtool-gpu/abi/p2p_rules.h"
#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/bench_commands.h"
#include "kvmtool-gpu/bench/p2p_bench.h"
#include "kvmtool-gpu/cli/bench_flags.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"

namespace kvmgpu::bench {

namespace {


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

P2pPlan plan_from(const ArgParser& p) {
    P2pPlan plan;
    const bool quick = p.has("quick");
    const std::string sizes = p.get_or("sizes", quick ? "4K,64K,1M" : "4K,16K,64K,256K,1M,4M,16M,64M,256M,1G");
    for (const auto& s : split_list(sizes)) {
        const uint64_t b = parse_size(s, "--sizes");
        if (b == 0 || b % 4 != 0 || b > kP2pMaxBytes) throw UsageError("--sizes: each a multiple of 4 up to 1G");
        plan.sizes.push_back(b);
    }
    if (plan.sizes.empty() || plan.sizes.size() > kP2pMaxSizes)
        throw UsageError("--sizes: 1 to " + std::to_string(kP2pMaxSizes) + " sizes");
    const uint64_t trials = parse_u64(p.get_or("trials", quick ? "1" : "3"), "--trials");
    if (trials == 0 || trials > kP2pMaxTrials) throw UsageError("--trials: 1.." + std::to_string(kP2pMaxTrials));
    plan.trials = static_cast<unsigned>(trials);
    plan.iters = parse_u64(p.get_or("iters", quick ? "200" : "1000"), "--iters");
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
    ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_p2p_help(), stdout);
        return 0;
    }
    P2pBenchPlan plan;
    plan.copies = plan_from(p);
    auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench p2p needs a vGPU (--vgpu none makes no sense here)");
    if (!p.get("gpus")) vgpu_cfg->gpus = {0, 0};
    if (vgpu_cfg->gpus.size() > kP2pMaxDevices)
        throw UsageError("--gpus: at most " + std::to_string(kP2pMaxDevices) + " devices for bench p2p");
    const uint64_t largest = *std::max_element(plan.copies.sizes.begin(), plan.copies.sizes.end());
    if (!p.get("gpu-mem-quota"))
        vgpu_cfg->options.device_mem_quota = std::max<uint64_t>(2 * largest * vgpu_cfg->gpus.size() + (64ull << 20),
                                                                1ull << 30);
    VmOptions& vm = plan.vm;
    vm.guest_path = locate_guest(p.get_or("guest", "p2p"));
    vm.ram_bytes = parse_size(p.get_or("mem", "256M"), "--mem");
    if (!memmap::parse_page_size(p.get_or("pages", "4K"), &vm.host_pages))
        throw UsageError("--pages: expected 4K, 2M or 1G");
    vm.timeout_s = parse_seconds(p.get_or("timeout", "600"), "--timeout", VcpuWatchdog::kMaxTimeoutS);
    vm.cmdline = guest_cmdline(plan.copies);
    cli::set_plan_common(p, args, *vgpu_cfg, &plan);
    return run_p2p_bench(plan);
}

const bench::BenchCommandRegistration kRegistered("p2p", bench_p2p_command);

} // namespace

} // namespace kvmgpu::bench
