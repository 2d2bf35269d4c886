// `kvmtool-gpu bench calls`: what a virtual CUDA call costs, per doorbell
// (trap, ioeventfd, poll) and with batching (deferred submission) off and
// on, against the same calls made natively in the same run.
// Flags only: they become a plan that the bench runs; the command registers
// itself under its name (bench/bench_commands.h).

#include <algorithm>
#include <cstdio>
#include <set>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/bench_commands.h"
#include "kvmtool-gpu/bench/calls_bench.h"
#include "kvmtool-gpu/cli/bench_flags.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"

namespace kvmgpu::bench {

namespace {


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
                   "  --reps N            runs per measurement: min, median and p90 reported; verdicts\n"
                   "                      need 5 or more (default 5)\n"
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

CallsSweep sweep_from_args(const ArgParser& p) {
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
    if (auto v = p.get("n")) s.n = parse_u64(*v, "--n");
    if (auto v = p.get("iters")) s.iters = parse_u64(*v, "--iters");
    if (auto v = p.get("copy-bytes")) s.copy_bytes = parse_u64(*v, "--copy-bytes");
    if (auto v = p.get("reps")) s.reps = parse_u64(*v, "--reps");
    if (auto v = p.get("wakes")) s.wakes = parse_u64(*v, "--wakes");
    if (auto v = p.get("pause-ms")) s.pause_ms = parse_u64(*v, "--pause-ms");
    if (auto v = p.get("idle-s")) s.idle_s = parse_u64(*v, "--idle-s");
    if (s.n == 0 || s.iters == 0 || s.reps == 0 || s.reps > 15 || s.copy_bytes == 0 || s.copy_bytes > 4096 ||
        s.wakes == 0 || s.pause_ms > 10000 || s.idle_s > 3600)
        throw UsageError("need --n, --iters, --wakes >= 1, --reps 1..15, --copy-bytes 1..4096, --pause-ms <= 10000, "
                         "--idle-s <= 3600");
    if (s.doorbells.empty()) throw UsageError("--doorbells: empty list");
    return s;
}

} // namespace

int bench_calls_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"doorbells", "batching", "n", "iters", "copy-bytes", "reps", "wakes", "pause-ms", "idle-s", "out",
                                    "plot-script", "mem", "pages", "timeout", "guest"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_calls_help(), stdout);
        return 0;
    }
    CallsBenchPlan plan;
    plan.sweep = sweep_from_args(p);
    const auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench calls needs a vGPU (--vgpu none makes no sense here)");
    VmOptions& base = plan.vm;
    base.guest_path = locate_guest(p.get_or("guest", "calls"));
    base.ram_bytes = parse_size(p.get_or("mem", "128M"), "--mem");
    if (!memmap::parse_page_size(p.get_or("pages", "4K"), &base.host_pages))
        throw UsageError("--pages: expected 4K, 2M or 1G");
    base.timeout_s = parse_seconds(p.get_or("timeout", "900"), "--timeout", VcpuWatchdog::kMaxTimeoutS);

    cli::set_plan_common(p, args, *vgpu_cfg, &plan);
    return run_calls_bench(plan);
}

const bench::BenchCommandRegistration kRegistered("calls", bench_calls_command);

} // namespace

} // namespace kvmgpu::bench
