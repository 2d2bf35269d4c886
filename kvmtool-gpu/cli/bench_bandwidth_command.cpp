#include "kvmtool-gpu/cli/bench_bandwidth_command.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/bandwidth_report.h"
#include "kvmtool-gpu/abi/bandwidth_rules.h"
#include "kvmtool-gpu/bench/guest_bench_run.h"
#include "kvmtool-gpu/bench/native_cuda.h"
#include "kvmtool-gpu/cli/arg_parser.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/kvm/open_kvm.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "memmap/huge_page_pool.h"

namespace kvmgpu::bench {

using cli::UsageError;

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

BandwidthSweep sweep_from_args(const cli::ArgParser& p) {
    BandwidthSweep s;
    if (p.has("quick")) {
        s = quick_bandwidth_sweep();
    } else {
        s = full_bandwidth_sweep(false);
    }
    try {
        if (auto v = p.get("sizes")) s.sizes = cli::parse_size_list(*v, "--sizes");
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
    if (auto v = p.get("slow-max")) s.slow_max = *v == "0" ? 0 : cli::parse_size(*v, "--slow-max");
    if (auto v = p.get("target")) s.target = cli::parse_size(*v, "--target");
    if (auto v = p.get("reps-min")) s.reps_min = cli::parse_u64(*v, "--reps-min");
    if (auto v = p.get("reps-max")) s.reps_max = cli::parse_u64(*v, "--reps-max");
    if (auto v = p.get("verify")) s.verify = *v == "0" ? 0 : cli::parse_size(*v, "--verify");
    if (s.reps_min == 0 || s.reps_max < s.reps_min) throw UsageError("need 1 <= --reps-min <= --reps-max");
    if (auto v = p.get("trials")) s.trials = parse_trials(*v);
    return s;
}

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
// run_native_in_child); meta says what it was, or why there is none.
void run_native(const BandwidthSweep& s, bool host_forced, std::vector<BandwidthResult>* out, BenchMeta* meta) {
    const uint64_t max_bytes = *std::max_element(s.sizes.begin(), s.sizes.end());
    const auto lines = run_native_in_child(meta, [&](BenchMeta* m, const NativeEmit& emit) {
        auto cuda = open_native_baseline(
            "bandwidth", host_forced, "--vgpu host: the guests use the host backend (CPU memcpy, not a GPU)",
            [&](NativeCuda& c, std::string* why) { return c.prepare_copies(max_bytes, why); },
            "CUDA Driver API in a process of its own: pageable = malloc, pinned = cuMemHostAlloc", m);
        if (!cuda) return;
        if (const double ms = cuda->register_ms_per_gib(); ms > 0)
            m->set("native_register_ms_per_gib", number_text(ms) + " (cuMemHostRegister of the malloc'd buffer)");
        const auto plan = plan_native_copies(s);
        std::vector<BandwidthResult> mine;
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
                emit(bandwidth_line(mine.back()));
            }
        }
    });
    for (const auto& line : lines)
        if (auto l = parse_bench_line(line, {"BW"}))
            if (auto r = bandwidth_from_line(*l, "-")) out->push_back(*r);
}

} // namespace

int bench_bandwidth_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"sizes", "host-pages", "guest-pages", "dirs", "kinds", "strategies", "slow-max",
                                    "target", "reps-min", "reps-max", "trials", "verify", "out", "plot-script", "mem",
                                    "timeout", "guest"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    cli::ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_bandwidth_help(), stdout);
        return 0;
    }
    const BandwidthSweep sweep = sweep_from_args(p);
    std::vector<BandwidthVm> vms;
    try {
        vms = plan_bandwidth_vms(sweep);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--strategies: ") + e.what());
    }
    if (vms.empty()) throw UsageError("nothing to measure (check --kinds, --dirs, --strategies)");
    const auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench bandwidth needs a vGPU (--vgpu none makes no sense here)");
    const std::string guest = locate_guest(p.get_or("guest", "bandwidth"));
    const double timeout = cli::parse_seconds(p.get_or("timeout", "1800"), "--timeout");
    const std::string out_dir = p.get_or("out", "bench-results");

    BenchMeta meta = start_bench("bandwidth", args, "guest TSC around submission and synchronization");
    meta.set("vgpu_doorbell", vgpu::to_string(vgpu_cfg->options.doorbell));
    meta.set("vgpu_gpu_worker", vgpu::to_string(vgpu_cfg->worker));
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe());

    KvmSystem kvm = open_kvm(); // before the native run: no KVM, no point
    std::vector<BandwidthResult> results;
    if (!p.has("no-native"))
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
        const BandwidthVm& plan = vms[v];
        VmOptions o;
        o.guest_path = guest;
        o.ram_bytes = p.has("mem") ? cli::parse_size(*p.get("mem"), "--mem") : plan.ram_bytes;
        o.host_pages = plan.host_pages;
        o.cmdline = plan.cmdline;
        o.timeout_s = timeout;
        std::printf("bench bandwidth: [vm %zu/%zu] %s, RAM %llu MiB, %zu measurements%s\n", v + 1, vms.size(),
                    plan.label().c_str(), static_cast<unsigned long long>(o.ram_bytes >> 20), plan.expected.size(),
                    sweep.trials > 1 ? (" (" + std::to_string(plan.expected.size() / sweep.trials) + " cells x " +
                                        std::to_string(sweep.trials) + " trials)").c_str()
                                     : "");
        std::fflush(stdout);
        const std::string hps(memmap::to_string(plan.host_pages));
        std::vector<BandwidthResult> got;
        uint64_t guest_planned = 0;
        bool checks_ok = true;
        auto on_line = [&](const BenchLine& l) {
            if (l.tag == "BW-PLAN") guest_planned = l.u64("measurements").value_or(0);
            if (l.tag == "BW-REG") { // the registered kind's cuMemHostRegister, guest TSC
                const double bytes = static_cast<double>(l.u64("bytes").value_or(0));
                const double ms = static_cast<double>(l.u64("register_ns").value_or(0)) / 1e6;
                meta.set("guest_register_ms_per_gib hp" + hps + " gp" + l.get("gpages"),
                         bytes > 0 ? number_text(ms * (1ull << 30) / bytes) + " (" + number_text(ms) + " ms for " +
                                         size_text(static_cast<uint64_t>(bytes)) + ", device address " +
                                         l.get("device_address") + ", " + l.get("status") + ")"
                                   : l.get("status"));
            }
            if (l.tag == "BW-CHECK" && l.get("status") != "ok" && l.get("status") != "not_supported") {
                checks_ok = false;
                progress("  check FAILED: %s %s\n", l.get("kind") + " " + l.get("strategy"), l.get("status"));
            }
            if (l.tag != "BW") return;
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
        o.ram_bytes = std::max(o.ram_bytes, plan.ram_bytes);
        std::string failure =
            run_guest_bench_checked(kvm, o, *vgpu_cfg, {"BW", "BW-PLAN", "BW-CHECK", "BW-REG", "BW-DONE"}, on_line,
                                    &outcome);
        record_guest_execution(&meta, outcome.result.execution);
        if (backend.empty() && !outcome.backend.empty()) {
            backend = outcome.backend;
            meta.set("vgpu_backend", backend);
            meta.set("vgpu_zero_copy", outcome.zero_copy ? "yes" : "no (guest RAM not registered)");
        }
        if (guest_planned != 0 && guest_planned != plan.expected.size())
            failure += " (guest planned " + std::to_string(guest_planned) + " measurements, driver " +
                       std::to_string(plan.expected.size()) + ")";
        all_ok &= append_planned(&results, plan.expected, got, [](const BandwidthResult& r) {
            return r.status == "ok" || r.status == "not_supported";
        });
        all_ok &= checks_ok;
        if (!failure.empty()) {
            all_ok = false;
            std::printf("bench bandwidth: [vm %zu/%zu] FAILED: %s\n", v + 1, vms.size(), failure.c_str());
        }
        save({});
    }
    write_bench_outputs(out_dir, "bandwidth", bandwidth_csv(results), bandwidth_json(results, meta),
                        bandwidth_markdown(results, meta), p.get_or("plot-script", ""));
    std::printf("bench bandwidth: %s\n", all_ok ? "every guest measurement completed"
                                                : "FAILED: some guest measurements did not complete (see above)");
    return all_ok ? 0 : 1;
}

} // namespace kvmgpu::bench
