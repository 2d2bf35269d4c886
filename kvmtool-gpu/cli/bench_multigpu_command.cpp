// `kvmtool-gpu bench multigpu`: E = A*B + C*D on four devices, partial
// products gathered by peer copies (G_G) or through host memory (G_H), over
// a sweep of matrix orders, natively and in a guest in the same run.
// Flags only: they become a plan that the bench runs; the command registers
// itself under its name (bench/bench_commands.h).

#include <algorithm>
#include <cstdio>
#include <set>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/bench_commands.h"
#include "kvmtool-gpu/bench/multigpu_bench.h"
#include "kvmtool-gpu/cli/bench_flags.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"

namespace kvmgpu::bench {

namespace {


const char* bench_multigpu_help() {
    static std::string text;
    if (text.empty())
        text = std::string(
                   "usage: kvmtool-gpu bench multigpu [options]\n"
                   "\n"
                   "The multi-GPU transfer study: E = A*B + C*D (float32, order n) on four devices,\n"
                   "A*B split by rows over devices 0 and 1, C*D over 2 and 3, the three remote\n"
                   "partial products gathered on device 0 by peer copies (G_G) or through host\n"
                   "memory (G_H). Per order: each mode's time, G_H - G_G, T (one partial product\n"
                   "copied device to host) and (G_H - G_G) / 5T, the seed's model; natively (the\n"
                   "same work in a process of its own, on the same GPUs) and in a guest (the\n"
                   "multigpu program, which checks its result), in the same run.\n"
                   "\n"
                   "  --orders LIST       matrix orders, multiples of 32 (default 1024,2048,4096,8192)\n"
                   "  --reps N            runs per mode, median reported (default 3)\n"
                   "  --samples N         elements of E the guest checks per mode (default 64)\n"
                   "  --quick             orders 128,256, reps 1 (CI on the host backend)\n"
                   "  --no-native         skip the native side\n"
                   "  --out DIR           writes DIR/multigpu.{csv,json,md,png} (default bench-results)\n"
                   "  --plot-script PATH  plot_bench.py (default: plots/ beside the binary or one folder up)\n"
                   "  --mem SIZE          guest RAM (default: enough for the largest order)\n"
                   "  --pages 4K|2M|1G    host pages backing guest RAM (default 4K)\n"
                   "  --timeout S         per guest run (default 900)\n"
                   "  --gpus LIST         as below, default 0,0,0,0 here (four devices on GPU 0)\n") +
               cli::vgpu_options_help() +
               "  (--gpu-mem-quota defaults to what the largest order needs)\n"
               "\n"
               "The output says, per pair of devices, where they live (same GPU, NVLink NVn, PCIe,\n"
               "no peer access: the driver's peer attributes and NVML's links), which of the three\n"
               "gathered products cross a GPU-to-GPU link, and whether this is the seed's case\n"
               "(all three do).\n"
               "\n"
               "Exit status: 0 when every order was measured (and the guest's checks passed),\n"
               "1 otherwise, 2 for bad usage or a set-up error.\n";
    return text.c_str();
}

namespace {

constexpr uint64_t kMiB = 1ull << 20;

std::vector<uint64_t> orders_from(const ArgParser& p) {
    std::vector<uint64_t> out;
    if (p.has("quick")) out = {128, 256};
    else out = {1024, 2048, 4096, 8192};
    if (auto v = p.get("orders")) {
        out.clear();
        for (const auto& o : split_list(*v)) out.push_back(parse_u64(o, "--orders"));
    }
    if (out.empty()) throw UsageError("--orders: empty list");
    for (uint64_t n : out)
        if (n == 0 || n % 32 != 0 || n > 32768) throw UsageError("--orders: each a multiple of 32 up to 32768");
    return out;
}

// What one VM needs at order n: device memory (four roles' matrices and
// partials, device 0's gathered partials and E) and guest RAM (G_H's
// pinned partial and the upload stage, plus room for the guest itself).
uint64_t device_bytes(uint64_t n) { return 48 * n * n; }
uint64_t guest_bytes(uint64_t n) { return std::max<uint64_t>(256 * kMiB, (2 * n * n + 128 * kMiB + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB)); }

} // namespace

int bench_multigpu_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"orders", "reps", "samples", "out", "plot-script", "mem", "pages", "timeout", "guest"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_multigpu_help(), stdout);
        return 0;
    }
    MultigpuBenchPlan plan;
    plan.orders = orders_from(p);
    const std::vector<uint64_t>& orders = plan.orders;
    const uint64_t reps = plan.reps = parse_u64(p.get_or("reps", p.has("quick") ? "1" : "3"), "--reps");
    plan.samples = parse_u64(p.get_or("samples", "64"), "--samples");
    if (reps == 0 || reps > 100) throw UsageError("--reps: 1..100");
    auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench multigpu needs a vGPU (--vgpu none makes no sense here)");
    if (!p.get("gpus")) vgpu_cfg->gpus = {0, 0, 0, 0};
    const uint64_t largest = *std::max_element(orders.begin(), orders.end());
    if (!p.get("gpu-mem-quota")) vgpu_cfg->options.device_mem_quota = std::max<uint64_t>(device_bytes(largest), 4ull << 30);
    VmOptions& base = plan.vm;
    base.guest_path = locate_guest(p.get_or("guest", "multigpu"));
    base.ram_bytes = p.get("mem") ? parse_size(*p.get("mem"), "--mem") : guest_bytes(largest);
    if (!memmap::parse_page_size(p.get_or("pages", "4K"), &base.host_pages))
        throw UsageError("--pages: expected 4K, 2M or 1G");
    base.timeout_s = parse_seconds(p.get_or("timeout", "900"), "--timeout", VcpuWatchdog::kMaxTimeoutS);
    cli::set_plan_common(p, args, *vgpu_cfg, &plan);
    return run_multigpu_bench(plan);
}

const bench::BenchCommandRegistration kRegistered("multigpu", bench_multigpu_command);

} // namespace

} // namespace kvmgpu::bench
