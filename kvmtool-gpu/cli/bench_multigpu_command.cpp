#include "kvmtool-gpu/cli/bench_multigpu_command.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "kvmtool-gpu/bench/bandwidth_plan.h"
#include "kvmtool-gpu/bench/guest_bench_run.h"
#include "kvmtool-gpu/bench/multigpu_report.h"
#include "kvmtool-gpu/bench/native_devices.h"
#include "kvmtool-gpu/bench/native_multigpu.h"
#include "kvmtool-gpu/bench/topology_probe.h"
#include "kvmtool-gpu/cli/arg_parser.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/kvm/open_kvm.h"
#include "kvmtool-gpu/vmm/guest_locator.h"

namespace kvmgpu::bench {

using cli::UsageError;

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

std::vector<uint64_t> orders_from(const cli::ArgParser& p) {
    std::vector<uint64_t> out;
    if (p.has("quick")) out = {128, 256};
    else out = {1024, 2048, 4096, 8192};
    if (auto v = p.get("orders")) {
        out.clear();
        for (const auto& o : split_list(*v)) out.push_back(cli::parse_u64(o, "--orders"));
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

int bench_multigpu_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"orders", "reps", "samples", "out", "plot-script", "mem", "pages", "timeout", "guest"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    cli::ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_multigpu_help(), stdout);
        return 0;
    }
    const std::vector<uint64_t> orders = orders_from(p);
    const uint64_t reps = cli::parse_u64(p.get_or("reps", p.has("quick") ? "1" : "3"), "--reps");
    const uint64_t samples = cli::parse_u64(p.get_or("samples", "64"), "--samples");
    if (reps == 0 || reps > 100) throw UsageError("--reps: 1..100");
    auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench multigpu needs a vGPU (--vgpu none makes no sense here)");
    if (!p.get("gpus")) vgpu_cfg->gpus = {0, 0, 0, 0};
    const uint64_t largest = *std::max_element(orders.begin(), orders.end());
    if (!p.get("gpu-mem-quota")) vgpu_cfg->options.device_mem_quota = std::max<uint64_t>(device_bytes(largest), 4ull << 30);
    VmOptions base;
    base.guest_path = locate_guest(p.get_or("guest", "multigpu"));
    base.ram_bytes = p.get("mem") ? cli::parse_size(*p.get("mem"), "--mem") : guest_bytes(largest);
    if (!memmap::parse_page_size(p.get_or("pages", "4K"), &base.host_pages))
        throw UsageError("--pages: expected 4K, 2M or 1G");
    base.timeout_s = cli::parse_seconds(p.get_or("timeout", "900"), "--timeout");

    BenchMeta meta = start_bench("multigpu", args, "guest TSC around each run (compute, gather, add), median of reps");
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
    std::vector<MultigpuRow> rows;
    const auto lines = run_native_on_gpus(&meta, p.has("no-native"), vgpu_cfg->backend == vgpu::BackendChoice::Host,
                                          vgpu_cfg->gpus.front(), [&](const NativeEmit& emit) {
                                              return native_multigpu(vgpu_cfg->gpus, orders,
                                                                     static_cast<unsigned>(reps), emit);
                                          });
    for (const auto& line : lines)
        if (auto l = parse_bench_line(line, {"multigpu:"}))
            if (auto r = multigpu_from_line(*l, "native")) rows.push_back(*r);
    for (uint64_t n : orders) print_summary(rows, n, "native");

    const std::string out_dir = p.get_or("out", "bench-results");
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
        const std::string failure = run_guest_bench_checked(kvm, o, *vgpu_cfg, {"multigpu:"}, on_line, &outcome);
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
    write_bench_outputs(out_dir, "multigpu", multigpu_csv(rows), multigpu_json(rows, meta),
                        multigpu_markdown(rows, meta), p.get_or("plot-script", ""));
    std::printf("bench multigpu: %s\n", all_ok ? "every order measured, the guest's checks passed"
                                               : "FAILED: see above");
    return all_ok ? 0 : 1;
}

} // namespace kvmgpu::bench
