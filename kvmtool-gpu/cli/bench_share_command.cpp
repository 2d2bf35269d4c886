// `kvmtool-gpu bench share`: N VMs on one GPU at once (N = 1, 2, 4, 8 by
// default) running the same work, a bandwidth mix or a compute mix, against
// one native process and N native processes in the same run: aggregate
// throughput, each VM's share and Jain's index, and the latency of a small
// call while the others run.
// Flags only: they become a plan that the bench runs; the command registers
// itself under its name (bench/bench_commands.h).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/bench_commands.h"
#include "kvmtool-gpu/bench/share_bench.h"
#include "kvmtool-gpu/cli/bench_flags.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"

namespace kvmgpu::bench {

namespace {


const char* bench_share_help() {
    static std::string text;
    if (text.empty())
        text = std::string(
                   "usage: kvmtool-gpu bench share [options]\n"
                   "\n"
                   "Several VMs share one GPU. For each N, N VMs (each with its own vGPU: GPU\n"
                   "worker process, CUDA context, quotas and doorbell) run the same work at once,\n"
                   "and so do N native processes, each with its own context. Once all are set up,\n"
                   "each member's work is counted over one common window (the vGPU's counters for\n"
                   "VMs, shared counters for processes): aggregate throughput against one native\n"
                   "process and against N, per-VM min/max and Jain's fairness index, and the\n"
                   "latency of a one-word synchronous cuMemsetD32 that each member times between\n"
                   "units of work.\n"
                   "\n"
                   "  --vms LIST          numbers of VMs at once (default 1,2,4,8; each 1..16)\n"
                   "  --work LIST         bandwidth (a unit: SIZE host->device and back from a pinned\n"
                   "                      and a pageable buffer), compute (a unit: one matmul of side\n"
                   "                      ORDER) and/or small (a unit: BATCH matmuls of side\n"
                   "                      SMALL-ORDER, few blocks each: most SMs idle, the case MPS\n"
                   "                      is for) (default bandwidth,compute)\n"
                   "  --small-order N     small: matmul side, a multiple of 16 (default 128: 64 blocks)\n"
                   "  --small-batch K     small: kernels per unit before one synchronize (default 16)\n"
                   "  --size SIZE         bandwidth copy size (default 32M)\n"
                   "  --order N           compute matmul side, a multiple of 16 (default 2048)\n"
                   "  --window S          seconds of the common window (default 3)\n"
                   "  --settle S          seconds between all ready and the window (default 0.5)\n"
                   "  --slack S           seconds a guest may work beyond settle + window, to cover\n"
                   "                      the others' later start (default 10); each stops as soon\n"
                   "                      as the window ends\n"
                   "  --quick             --vms 1,2 --size 1M --order 64 --window 0.5 --settle 0.2\n"
                   "                      --slack 3 (CI, on the host backend)\n"
                   "  --intruder ROLE     in every group of 2 or more, the last VM misbehaves instead\n"
                   "                      of working: fault (a kernel on an unallocated address),\n"
                   "                      quota (allocates until its quota refuses), register\n"
                   "                      (registers a pageable buffer until its limits refuse) or\n"
                   "                      storm (rings the doorbell with an empty ring); the others\n"
                   "                      are measured. With fault the others make their work again\n"
                   "                      when it fails (every worker of an MPS server is replaced)\n"
                   "                      and report the calls that failed and the time lost\n"
                   "  --no-native         skip the native processes\n"
                   "  --out DIR           writes DIR/share.{csv,json,md,png} (default bench-results)\n"
                   "  --plot-script PATH  plot_bench.py (default: plots/ beside the binary or one folder up)\n"
                   "  --mem SIZE          guest RAM per VM (default: enough for SIZE)\n"
                   "  --pages 4K|2M|1G    host pages backing guest RAM (default 4K)\n"
                   "  --timeout S         per guest run (default 600)\n") +
               cli::vgpu_options_help() +
               "\n"
               "Exit status: 0 when every member of every group was measured and every guest's\n"
               "checks passed, 1 otherwise, 2 for bad usage or a set-up error.\n";
    return text.c_str();
}

namespace {

constexpr uint64_t kMaxVms = 16;
constexpr uint64_t kMiB = 1ull << 20;

std::vector<unsigned> vm_counts(const ArgParser& p) {
    std::vector<unsigned> out;
    for (const auto& v : split_list(p.get_or("vms", p.has("quick") ? "1,2" : "1,2,4,8"))) {
        const uint64_t n = parse_u64(v, "--vms");
        if (n == 0 || n > kMaxVms) throw UsageError("--vms: each 1.." + std::to_string(kMaxVms));
        out.push_back(static_cast<unsigned>(n));
    }
    if (out.empty()) throw UsageError("--vms: empty list");
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::string> works(const ArgParser& p) {
    std::vector<std::string> out = split_list(p.get_or("work", "bandwidth,compute"));
    if (out.empty()) throw UsageError("--work: empty list");
    for (const auto& w : out)
        if (w != "bandwidth" && w != "compute" && w != "small")
            throw UsageError("--work: bandwidth, compute or small, not '" + w + "'");
    return out;
}

SmallWork small_work(const ArgParser& p) {
    SmallWork w;
    const uint64_t order = parse_u64(p.get_or("small-order", p.has("quick") ? "32" : "128"), "--small-order");
    if (order < 16 || order > 8192 || order % 16 != 0) throw UsageError("--small-order: 16..8192, a multiple of 16");
    const uint64_t batch = parse_u64(p.get_or("small-batch", p.has("quick") ? "4" : "16"), "--small-batch");
    if (batch < 1 || batch > 1024) throw UsageError("--small-batch: 1..1024");
    w.order = static_cast<unsigned>(order), w.batch = static_cast<unsigned>(batch);
    return w;
}


double seconds_arg(const ArgParser& p, const char* name, const char* quick, const char* def) {
    const double s = parse_seconds(p.get_or(name, p.has("quick") ? quick : def), std::string("--") + name,
                                   VcpuWatchdog::kMaxTimeoutS);
    if (s <= 0) throw UsageError(std::string("--") + name + ": more than 0 seconds");
    return s;
}

} // namespace

int bench_share_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"vms", "work", "size", "order", "small-order", "small-batch", "window", "settle",
                                    "slack", "intruder", "out", "plot-script", "mem", "pages", "timeout", "guest"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_share_help(), stdout);
        return 0;
    }
    const bool quick = p.has("quick");
    const std::vector<unsigned> counts = vm_counts(p);
    const std::vector<std::string> work_list = works(p);
    const uint64_t size = parse_size(p.get_or("size", quick ? "1M" : "32M"), "--size");
    if (size < 4096 || size > (1ull << 30) || size % 4 != 0) throw UsageError("--size: 4K..1G, a multiple of 4");
    const uint64_t order = parse_u64(p.get_or("order", quick ? "64" : "2048"), "--order");
    if (order < 16 || order > 8192 || order % 16 != 0) throw UsageError("--order: 16..8192, a multiple of 16");
    const SmallWork small = small_work(p);
    ShareWindow window;
    window.window_s = seconds_arg(p, "window", "0.5", "3");
    window.settle_s = seconds_arg(p, "settle", "0.2", "0.5");
    const double slack = seconds_arg(p, "slack", "3", "10");
    const uint64_t guest_seconds = static_cast<uint64_t>(std::ceil(window.settle_s + window.window_s + slack));
    const std::string intruder = p.get_or("intruder", "");
    if (!intruder.empty() && intruder != "fault" && intruder != "quota" && intruder != "register" &&
        intruder != "storm")
        throw UsageError("--intruder: fault, quota, register or storm");
    auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench share needs a vGPU (--vgpu none makes no sense here)");
    VmOptions base;
    base.guest_path = locate_guest(p.get_or("guest", "share"));
    base.ram_bytes = p.get("mem") ? parse_size(*p.get("mem"), "--mem")
                                  : std::max<uint64_t>(256 * kMiB, (2 * size + 128 * kMiB + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB));
    if (!memmap::parse_page_size(p.get_or("pages", "4K"), &base.host_pages))
        throw UsageError("--pages: expected 4K, 2M or 1G");
    base.timeout_s = parse_seconds(p.get_or("timeout", "600"), "--timeout", VcpuWatchdog::kMaxTimeoutS);
    validate_options(base);

    ShareBenchPlan plan;
    cli::set_plan_common(p, args, *vgpu_cfg, &plan);
    plan.counts = counts;
    plan.works = work_list;
    plan.size = size;
    plan.order = order;
    plan.small = small;
    plan.window = window;
    plan.guest_seconds = guest_seconds;
    plan.intruder = intruder;
    plan.vm = base;
    return run_share_bench(plan);
}

const bench::BenchCommandRegistration kRegistered("share", bench_share_command);

} // namespace

} // namespace kvmgpu::bench
