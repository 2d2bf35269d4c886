#include "kvmtool-gpu/cli/bench_share_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/native_share.h"
#include "kvmtool-gpu/bench/share_fault.h"
#include "kvmtool-gpu/bench/share_guests.h"
#include "kvmtool-gpu/bench/share_report.h"
#include "kvmtool-gpu/cli/arg_parser.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/kvm/open_kvm.h"
#include "kvmtool-gpu/vmm/guest_locator.h"

namespace kvmgpu::bench {

using cli::UsageError;

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
                   "  --slack S           seconds a guest works beyond settle + window, to cover\n"
                   "                      the others' later start (default 10)\n"
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

std::vector<unsigned> vm_counts(const cli::ArgParser& p) {
    std::vector<unsigned> out;
    for (const auto& v : split_list(p.get_or("vms", p.has("quick") ? "1,2" : "1,2,4,8"))) {
        const uint64_t n = cli::parse_u64(v, "--vms");
        if (n == 0 || n > kMaxVms) throw UsageError("--vms: each 1.." + std::to_string(kMaxVms));
        out.push_back(static_cast<unsigned>(n));
    }
    if (out.empty()) throw UsageError("--vms: empty list");
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::string> works(const cli::ArgParser& p) {
    std::vector<std::string> out = split_list(p.get_or("work", "bandwidth,compute"));
    if (out.empty()) throw UsageError("--work: empty list");
    for (const auto& w : out)
        if (w != "bandwidth" && w != "compute" && w != "small")
            throw UsageError("--work: bandwidth, compute or small, not '" + w + "'");
    return out;
}

struct SmallWork {
    unsigned order = 128, batch = 16;
    unsigned blocks() const { return ((order + 15) / 16) * ((order + 15) / 16); }
};
SmallWork small_work(const cli::ArgParser& p) {
    SmallWork w;
    const uint64_t order = cli::parse_u64(p.get_or("small-order", p.has("quick") ? "32" : "128"), "--small-order");
    if (order < 16 || order > 8192 || order % 16 != 0) throw UsageError("--small-order: 16..8192, a multiple of 16");
    const uint64_t batch = cli::parse_u64(p.get_or("small-batch", p.has("quick") ? "4" : "16"), "--small-batch");
    if (batch < 1 || batch > 1024) throw UsageError("--small-batch: 1..1024");
    w.order = static_cast<unsigned>(order), w.batch = static_cast<unsigned>(batch);
    return w;
}

bool under_mps(const VgpuConfig& c) { return c.share && c.share->mode() == GpuShareMode::Mps; }

double seconds_arg(const cli::ArgParser& p, const char* name, const char* quick, const char* def) {
    const double s = cli::parse_seconds(p.get_or(name, p.has("quick") ? quick : def), std::string("--") + name);
    if (s <= 0) throw UsageError(std::string("--") + name + ": more than 0 seconds");
    return s;
}

// What a misbehaving VM's SHARE: line says of its role: the fault's status
// and recovery, the storm's kicks, or (quota) its data check.
std::string intruder_note(const BenchLine& report) {
    std::string what;
    for (const char* key : {"status", "recovered", "kicks"})
        if (report.find(key)) what += std::string(what.empty() ? "" : " ") + key + "=" + report.get(key);
    if (what.empty()) what = "check=" + report.get("check");
    return report.get("role") + ": " + what;
}

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

int bench_share_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"vms", "work", "size", "order", "small-order", "small-batch", "window", "settle",
                                    "slack", "intruder", "out", "plot-script", "mem", "pages", "timeout", "guest"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    cli::ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_share_help(), stdout);
        return 0;
    }
    const bool quick = p.has("quick");
    const std::vector<unsigned> counts = vm_counts(p);
    const std::vector<std::string> work_list = works(p);
    const uint64_t size = cli::parse_size(p.get_or("size", quick ? "1M" : "32M"), "--size");
    if (size < 4096 || size > (1ull << 30) || size % 4 != 0) throw UsageError("--size: 4K..1G, a multiple of 4");
    const uint64_t order = cli::parse_u64(p.get_or("order", quick ? "64" : "2048"), "--order");
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
    base.ram_bytes = p.get("mem") ? cli::parse_size(*p.get("mem"), "--mem")
                                  : std::max<uint64_t>(256 * kMiB, (2 * size + 128 * kMiB + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB));
    if (!memmap::parse_page_size(p.get_or("pages", "4K"), &base.host_pages))
        throw UsageError("--pages: expected 4K, 2M or 1G");
    base.timeout_s = cli::parse_seconds(p.get_or("timeout", "600"), "--timeout");
    validate_options(base);

    BenchMeta meta = start_bench("share", args, "each member counts its own latency samples; rates come from "
                                                "counters read by the VMM over a common window");
    meta.set("vgpu_gpu_worker", vgpu::to_string(vgpu_cfg->worker));
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe());
    char window_text[96];
    std::snprintf(window_text, sizeof window_text, "%.2f s after all ready + %.2f s settle; guests work %llu s",
                  window.window_s, window.settle_s, static_cast<unsigned long long>(guest_seconds));
    meta.set("window", window_text);
    meta.set("bandwidth_unit", "SIZE=" + size_text(size) + " host->device and back, pinned and pageable");
    meta.set("compute_unit", "matmul order " + std::to_string(order));
    meta.set("small_unit", std::to_string(small.batch) + " x matmul order " + std::to_string(small.order) + " (" +
                               std::to_string(small.blocks()) + " blocks each), one synchronize");
    if (!intruder.empty()) meta.set("intruder", intruder + " (the last VM of every group of 2 or more)");

    std::vector<ShareRow> rows;
    const std::string out_dir = p.get_or("out", "bench-results");
    auto save = [&] { write_result_files(out_dir, "share", share_csv(rows), share_json(rows, meta), share_markdown(rows, meta)); };
    bool all_ok = true;
    const bool host_forced = vgpu_cfg->backend == vgpu::BackendChoice::Host;
    if (p.has("no-native")) {
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
    write_bench_outputs(out_dir, "share", share_csv(rows), share_json(rows, meta), share_markdown(rows, meta),
                        p.get_or("plot-script", ""));
    std::printf("bench share: %s\n", all_ok ? "every VM and process measured, every guest's checks passed"
                                            : "FAILED: see above");
    return all_ok ? 0 : 1;
}

} // namespace kvmgpu::bench
