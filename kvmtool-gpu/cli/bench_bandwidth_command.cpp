// `kvmtool-gpu bench bandwidth`: host<->device bandwidth in guests (pinned
// and pageable buffers, every scatter-gather strategy, 4K/2M/1G host
// backing) against native pinned and pageable copies measured in the same
// run.
// Flags only: they become a plan that the bench runs; the command registers
// itself under its name (bench/bench_commands.h).

#include <algorithm>
#include <cstdio>
#include <set>

#include "kvmtool-gpu/abi/bandwidth_rules.h"
#include "kvmtool-gpu/bench/bandwidth_bench.h"
#include "kvmtool-gpu/bench/bandwidth_report.h"
#include "kvmtool-gpu/bench/bench_commands.h"
#include "kvmtool-gpu/cli/bench_flags.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"
#include "memmap/huge_page_pool.h"

namespace kvmgpu::bench {

namespace {


const char* bench_bandwidth_help() {
    static std::string text;
    if (text.empty())
        text = std::string(
                   "usage: kvmtool-gpu bench bandwidth [options]\n"
                   "\n"
                   "Host<->device copy bandwidth from inside guests, against native copies measured\n"
                   "first in the same run (pageable malloc and pinned memory, CUDA Driver API).\n"
                   "Every figure is timed with CUDA events on the copy stream around the copies;\n"
                   "the guest's own TSC time is reported beside it (labelled as emulator time\n"
                   "where KVM emulates guest code). twocopy's figures are that TSC time: the\n"
                   "guest's own copies are part of the mode. One VM per host backing x guest\n"
                   "page size. Every guest row is labelled with its GViM mode (2-copy, 1-copy,\n"
                   "bypass) and the markdown puts the three side by side.\n"
                   "\n"
                   "  --quick             small sweep: 4K,64K,1M; host pages 4K,2M (about a minute\n"
                   "                      nested under QEMU TCG on the host backend)\n"
                   "  --sizes LIST        copy sizes (default 4K,16K,...,1G: x4 steps)\n"
                   "  --host-pages LIST   backing of guest RAM: 4K,2M,1G (default 4K,2M, and 1G\n"
                   "                      when the 1 GiB pool has room)\n"
                   "  --guest-pages LIST  page size of the guest's pageable heap: 4K,2M (default both)\n"
                   "  --dirs LIST         htod,dtoh (default both)\n"
                   "  --kinds LIST        guest buffers: pinned,pageable,registered,twocopy (default\n"
                   "                      all; --quick: all but registered). registered: a pageable\n"
                   "                      buffer after cuMemHostRegister; twocopy: GViM's 2-copy, a\n"
                   "                      pageable buffer the guest copies through its own pinned\n"
                   "                      bounce buffers (4 MiB chunks), sent with the bounce strategy\n"
                   "  --strategies LIST   for pageable buffers, default all of\n"
                   "                      " + std::string(kSgStrategyList) + "\n"
                   "                      (the targets judge auto, gather and walk; bounce is GViM's\n"
                   "                      1-copy, the others bypass)\n"
                   "  --slow-max SIZE     perchunk/coalesce/bounce/batch only up to SIZE (default 256M;\n"
                   "                      0 = at every size)\n"
                   "  --target SIZE       bytes one measurement moves (default 256M), within\n"
                   "  --reps-min N --reps-max N  repetitions per measurement (default 2..20)\n"
                   "  --trials N          measure every cell (kind, strategy, size, direction) N times,\n"
                   "                      native and guest alike (1.." + std::to_string(kMaxTrials) + ", default 1);\n"
                   "                      CSV/JSON get a row per trial, the markdown and the target\n"
                   "                      verdicts each cell's median trial, with its spread\n"
                   "  --verify SIZE       guest data round-trip check per kind/strategy (default 64K)\n"
                   "  --no-native         skip the native baseline\n"
                   "  --out DIR           writes DIR/bandwidth.{csv,json,md,png} (default bench-results)\n"
                   "  --plot-script PATH  plot_bench.py (default: plots/ beside the binary or one folder up)\n"
                   "  --mem SIZE          guest RAM (default: from the largest size)\n"
                   "  --timeout S         per guest run (default 1800)\n") +
               cli::vgpu_options_help() +
               "\n"
               "Exit status: 0 when every planned guest measurement completed (ok, or the\n"
               "backend does not support that strategy) and every data check matched; 1\n"
               "otherwise; 2 for bad usage or a set-up error.\n";
    return text.c_str();
}

namespace {

std::vector<memmap::PageSize> parse_pages(const std::string& text, const std::string& what) {
    std::vector<memmap::PageSize> out;
    for (const auto& item : split_list(text)) {
        memmap::PageSize p;
        if (!memmap::parse_page_size(item, &p)) throw UsageError(what + " '" + item + "': expected 4K, 2M or 1G");
        out.push_back(p);
    }
    if (out.empty()) throw UsageError(what + ": empty list");
    return out;
}

bool pool_1g_has_room(uint64_t ram) {
    const auto pool = memmap::read_huge_page_pool(memmap::PageSize::k1G);
    return pool && pool->available() * (1ull << 30) >= ram;
}

BandwidthSweep sweep_from_args(const ArgParser& p) {
    BandwidthSweep s;
    if (p.has("quick")) {
        s = quick_bandwidth_sweep();
    } else {
        s = full_bandwidth_sweep(false);
    }
    try {
        if (auto v = p.get("sizes")) s.sizes = parse_size_list(*v, "--sizes");
    } catch (const std::exception& e) {
        throw UsageError(std::string("--sizes: ") + e.what());
    }
    const uint64_t max_bytes = *std::max_element(s.sizes.begin(), s.sizes.end());
    if (auto v = p.get("host-pages"))
        s.host_pages = parse_pages(*v, "--host-pages");
    else if (!p.has("quick") &&
             pool_1g_has_room(bandwidth_ram_bytes(max_bytes, memmap::PageSize::k1G, s.sg_entries)))
        s.host_pages.push_back(memmap::PageSize::k1G);
    if (auto v = p.get("guest-pages")) {
        s.guest_pages = split_list(*v);
        for (const auto& g : s.guest_pages)
            if (g != "4K" && g != "2M") throw UsageError("--guest-pages '" + g + "': expected 4K or 2M");
    }
    if (auto v = p.get("dirs")) {
        const auto d = split_list(*v);
        s.htod = std::count(d.begin(), d.end(), "htod");
        s.dtoh = std::count(d.begin(), d.end(), "dtoh");
        if (d.size() != size_t(s.htod) + s.dtoh || d.empty()) throw UsageError("--dirs: expected htod,dtoh");
    }
    if (auto v = p.get("kinds")) {
        const auto k = split_list(*v);
        s.pinned = std::count(k.begin(), k.end(), "pinned");
        s.pageable = std::count(k.begin(), k.end(), "pageable");
        s.registered = std::count(k.begin(), k.end(), "registered");
        s.twocopy = std::count(k.begin(), k.end(), "twocopy");
        if (k.size() != size_t(s.pinned) + s.pageable + s.registered + s.twocopy || k.empty())
            throw UsageError("--kinds: expected pinned,pageable,registered,twocopy");
    }
    if (auto v = p.get("strategies")) s.strategies = split_list(*v);
    if (auto v = p.get("slow-max")) s.slow_max = *v == "0" ? 0 : parse_size(*v, "--slow-max");
    if (auto v = p.get("target")) s.target = parse_size(*v, "--target");
    if (auto v = p.get("reps-min")) s.reps_min = parse_u64(*v, "--reps-min");
    if (auto v = p.get("reps-max")) s.reps_max = parse_u64(*v, "--reps-max");
    if (auto v = p.get("verify")) s.verify = *v == "0" ? 0 : parse_size(*v, "--verify");
    if (s.reps_min == 0 || s.reps_max < s.reps_min) throw UsageError("need 1 <= --reps-min <= --reps-max");
    if (auto v = p.get("trials")) s.trials = parse_trials(*v);
    return s;
}

} // namespace

int bench_bandwidth_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"sizes", "host-pages", "guest-pages", "dirs", "kinds", "strategies", "slow-max",
                                    "target", "reps-min", "reps-max", "trials", "verify", "out", "plot-script", "mem",
                                    "timeout", "guest"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_bandwidth_help(), stdout);
        return 0;
    }
    BandwidthBenchPlan plan;
    plan.sweep = sweep_from_args(p);
    try {
        plan.vms = plan_bandwidth_vms(plan.sweep);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--strategies: ") + e.what());
    }
    if (plan.vms.empty()) throw UsageError("nothing to measure (check --kinds, --dirs, --strategies)");
    const auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench bandwidth needs a vGPU (--vgpu none makes no sense here)");
    plan.guest_path = locate_guest(p.get_or("guest", "bandwidth"));
    plan.timeout_s = parse_seconds(p.get_or("timeout", "1800"), "--timeout", VcpuWatchdog::kMaxTimeoutS);
    if (p.has("mem")) plan.ram_bytes = parse_size(*p.get("mem"), "--mem");
    cli::set_plan_common(p, args, *vgpu_cfg, &plan);
    return run_bandwidth_bench(plan);
}


const bench::BenchCommandRegistration kRegistered("bandwidth", bench_bandwidth_command);

} // namespace

} // namespace kvmgpu::bench
