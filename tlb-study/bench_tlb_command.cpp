// `kvmtool-gpu bench tlb`: the TLB and translation-cost study (this folder):
// native pointer chase per backing page size, the VMM's translation work,
// and the guest pointer chase per (guest pages x host backing) when
// /dev/kvm opens; markdown on stdout, progress on stderr, CSV/JSON/PNG on
// request. It lives with the study and registers itself by name
// (bench/bench_commands.h), so the VMM's folders never include the study
// and the study never includes the command line (cli/).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "kvmtool-gpu/bench/bench_commands.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/util/plot_runner.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"
#include "tlb-study/report.h"
#include "tlb-study/tlb_study.h"

namespace tlbstudy {

namespace {

using kvmgpu::find_plot_script;
using kvmgpu::parse_seconds;
using kvmgpu::parse_size;
using kvmgpu::parse_u64;
using kvmgpu::run_plot;
using kvmgpu::UsageError;

const char* bench_tlb_help() {
    return "usage: kvmtool-gpu bench tlb [--quick] [--max-ws SIZE] [--guest-max-ws SIZE] [--reps N]\n"
           "                             [--accesses N] [--guest-accesses N] [--guest-timeout S] [--seed N]\n"
           "                             [--no-guest | --require-guest] [--guest NAME]\n"
           "                             [--csv FILE] [--json FILE] [--plot FILE.png] [--plot-script PATH]\n"
           "\n"
           "The TLB and address-translation study (tlb-study/README.md):\n"
           "  native   pointer chase (one dependent load per 4 KiB page, random cyclic order) over\n"
           "           working sets from 4K to --max-ws (default 4G; --quick: 64M, powers of 4) in\n"
           "           buffers on 4K, 2M and 1G pages (huge sizes skipped, with the reason, when no\n"
           "           pages are reserved); ns per access, median of --reps (5; quick 3)\n"
           "  counters dTLB misses and page walks via perf_event_open + libpfm4, where a PMU exists\n"
           "  VMM      GuestMemory::translate lookups/s, scatter-gather entries and coalescing per\n"
           "           transfer (4K vs 2M guest frames), backing mmap/prefault/first-touch per GiB\n"
           "  guest    the same chase inside a VM (guest-stub pointer_chase) for guest pages 4K/2M x\n"
           "           host backing 4K/2M/1G, up to --guest-max-ws (default 1G; quick 4M), with KVM's\n"
           "           binary statistics before/after; only when /dev/kvm opens. Each run measures\n"
           "           how its guest code executed; where it was emulated (or the host itself is\n"
           "           TCG-emulated) this is said, and those figures are emulator costs, not TLB costs.\n"
           "\n"
           "Markdown tables go to stdout, progress to stderr. --csv: one measurement per row;\n"
           "--json: everything, with the machine description; --plot: latency vs working set\n"
           "(python3 + matplotlib; skipped with a note without them; plot_tlb.py is found in plots/\n"
           "beside the binary or one folder up, or given with --plot-script). Exit status 0, or 1 when a\n"
           "planned run failed (or, with --require-guest, when the guest part could not run),\n"
           "2 for bad usage.\n";
}


int bench_tlb_command(const std::vector<std::string>& args) {
    kvmgpu::ArgParser p({"max-ws", "guest-max-ws", "reps", "accesses", "guest-accesses", "guest-timeout", "seed", "guest", "csv",
                 "json", "plot", "plot-script"},
                {"quick", "no-guest", "require-guest", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_tlb_help(), stdout);
        return 0;
    }
    StudyOptions o;
    o.sweep.quick = p.has("quick");
    o.sweep.guest = !p.has("no-guest");
    if (auto v = p.get("max-ws")) o.sweep.max_ws = parse_size(*v, "--max-ws");
    if (auto v = p.get("guest-max-ws")) o.sweep.guest_max_ws = parse_size(*v, "--guest-max-ws");
    if (auto v = p.get("reps")) {
        const uint64_t reps = parse_u64(*v, "--reps");
        if (reps == 0 || reps > 31) throw UsageError("--reps must be in [1, 31]");
        o.sweep.reps = static_cast<uint32_t>(reps);
    }
    if (auto v = p.get("accesses")) o.sweep.accesses = parse_size(*v, "--accesses");
    if (auto v = p.get("guest-accesses")) o.sweep.guest_accesses = parse_size(*v, "--guest-accesses");
    if (o.sweep.max_ws != 0 && o.sweep.max_ws < 4096) throw UsageError("--max-ws must be at least 4K");
    if (p.has("accesses") && o.sweep.accesses == 0) throw UsageError("--accesses must be positive");
    if (p.has("guest-accesses") && o.sweep.guest_accesses == 0) throw UsageError("--guest-accesses must be positive");
    if (p.has("no-guest") && p.has("require-guest")) throw UsageError("--no-guest and --require-guest exclude each other");
    if (auto v = p.get("guest-timeout")) o.guest_timeout_s = parse_seconds(*v, "--guest-timeout", kvmgpu::VcpuWatchdog::kMaxTimeoutS);
    if (auto v = p.get("seed")) o.seed = parse_u64(*v, "--seed");
    o.guest = p.get_or("guest", "pointer_chase");

    const auto r = run_study(o, [](const std::string& line) {
        std::fprintf(stderr, "bench tlb: %s\n", line.c_str());
        std::fflush(stderr);
    });
    write_markdown(r, std::cout);
    std::cout.flush();

    std::string csv = p.get_or("csv", "");
    if (!csv.empty()) write_file(csv, r, write_csv);
    if (auto json = p.get("json")) write_file(*json, r, write_json);
    if (auto png = p.get("plot")) {
        std::string tmp;
        if (csv.empty()) { // the plot reads the CSV: write one beside the PNG
            tmp = *png + ".csv";
            write_file(tmp, r, write_csv);
        }
        const std::string script = find_plot_script(p.get_or("plot-script", ""), "plot_tlb.py");
        std::fprintf(stderr, "bench tlb: %s\n", run_plot(script, {csv.empty() ? tmp : csv, *png}, *png).c_str());
        if (!tmp.empty()) std::remove(tmp.c_str());
    }

    auto failures = r.failures();
    if (p.has("require-guest")) {
        size_t ran = 0;
        for (const auto& g : r.guest) ran += g.ok ? 1 : 0;
        if (ran == 0)
            failures.push_back("--require-guest: no guest run completed" +
                               (r.plan.guest_skip.empty() ? std::string() : " (" + r.plan.guest_skip + ")"));
    }
    for (const auto& f : failures) std::fprintf(stderr, "bench tlb: FAILED: %s\n", f.c_str());
    return failures.empty() ? 0 : 1;
}

const kvmgpu::bench::BenchCommandRegistration kRegistered("tlb", bench_tlb_command);

} // namespace

} // namespace tlbstudy
