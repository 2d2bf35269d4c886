// `kvmtool-gpu bench boot`: VM creation -> first guest instruction, and ->
// guest exit, repeated; prints median / min / p90 and optional CSV.
// The CLI's own bench (a loop of VirtualMachine runs); the command registers
// itself under its name (bench/bench_commands.h).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "kvmgpu/kvmgpu.hpp"
#include "kvmtool-gpu/bench/bench_commands.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/kvm/open_kvm.h"
#include "kvmtool-gpu/kvm/kvm_flavor.h"
#include "kvmtool-gpu/kvm/kvm_system.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::cli {

namespace {

const char* bench_boot_help() {
    return "usage: kvmtool-gpu bench boot [--guest boot_exit] [--mem 512M] [--pages 2M] [--reps 20] [--csv FILE] [--api]\n"
           "\n"
           "Creates, boots and tears down a VM --reps times and reports, in ms:\n"
           "  first-instruction  VM creation began -> the guest's entry marker (MMIO write)\n"
           "  exit               VM creation began -> the guest wrote the exit port\n"
           "  prefault           touching all guest RAM up front (--prefault; not in the above)\n"
           "Median, min and p90 over the repetitions; the first run is reported apart (cold).\n"
           "--api boots each VM through the embedding API (kvmgpu::Machine, docs/embedding.md)\n"
           "instead of the VMM's VirtualMachine directly: the two tables should agree.\n";
}

namespace {
struct Stats {
    double median, min, p90;
};
Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v.front(), v[std::min(v.size() - 1, v.size() * 9 / 10)]};
}
} // namespace

int bench_boot_command(const std::vector<std::string>& args) {
    ArgParser p({"guest", "mem", "pages", "reps", "csv"}, {"prefault", "api", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_boot_help(), stdout);
        return 0;
    }
    VmOptions o;
    o.guest_path = locate_guest(p.get_or("guest", "boot_exit"));
    o.ram_bytes = parse_size(p.get_or("mem", "512M"), "--mem");
    const std::string pages = p.get_or("pages", "2M");
    if (!memmap::parse_page_size(pages, &o.host_pages)) throw UsageError("--pages '" + pages + "': expected 4K, 2M or 1G");
    o.prefault = p.has("prefault");
    o.timeout_s = 30;
    o.console = [](std::string_view) {};
    const uint64_t reps = parse_u64(p.get_or("reps", "20"), "--reps");
    if (reps < 2) throw UsageError("--reps must be at least 2");

    validate_options(o);
    KvmSystem kvm = open_kvm();
    const bool through_api = p.has("api");
    // One boot to its end: the VMM's result, or the API's mapped onto it.
    auto boot = [&]() -> RunResult {
        if (!through_api) {
            VirtualMachine vm(kvm, o);
            return vm.run();
        }
        VmConfig c;
        c.guest = o.guest_path;
        c.ram_bytes = o.ram_bytes;
        c.pages = o.host_pages == memmap::PageSize::k1G ? PageSize::k1G
                  : o.host_pages == memmap::PageSize::k2M ? PageSize::k2M
                                                          : PageSize::k4K;
        c.prefault = o.prefault;
        c.timeout_s = o.timeout_s;
        c.console = o.console;
        c.seccomp = false; // as above: the vCPU on this thread
        Machine vm(c);
        const Result r = vm.run();
        RunResult out;
        out.outcome = r.passed() ? RunOutcome::GuestExit : RunOutcome::Unexpected;
        out.detail = r.detail;
        out.timings.first_instruction_ns = r.timings.first_instruction_ns;
        out.timings.prefault_ns = r.timings.prefault_ns;
        return out;
    };
    std::vector<double> first, exit, prefault;
    double cold_first = 0, cold_exit = 0;
    for (uint64_t i = 0; i <= reps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const RunResult r = boot();
        const double exit_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() -
            r.timings.prefault_ns * 1e-6;
        if (!r.passed()) throw std::runtime_error("guest failed during the benchmark: " + r.detail);
        const double first_ms = (r.timings.first_instruction_ns - r.timings.prefault_ns) * 1e-6;
        if (i == 0) {
            cold_first = first_ms;
            cold_exit = exit_ms;
            continue;
        }
        first.push_back(first_ms);
        exit.push_back(exit_ms);
        prefault.push_back(r.timings.prefault_ns * 1e-6);
    }
    const auto f = stats(first), e = stats(exit), pf = stats(prefault);
    std::printf("bench boot%s: guest %s, %lluM RAM on %s pages, %s, %llu reps (+1 cold)\n",
                through_api ? " (through the embedding API)" : "", o.guest_path.c_str(),
                (unsigned long long)(o.ram_bytes >> 20), std::string(memmap::to_string(o.host_pages)).c_str(),
                detect_kvm_flavor().describe().c_str(), (unsigned long long)reps);
    std::printf("%-18s %10s %10s %10s %10s\n", "metric (ms)", "median", "min", "p90", "cold");
    std::printf("%-18s %10.3f %10.3f %10.3f %10.3f\n", "first-instruction", f.median, f.min, f.p90, cold_first);
    std::printf("%-18s %10.3f %10.3f %10.3f %10.3f\n", "exit", e.median, e.min, e.p90, cold_exit);
    if (o.prefault) std::printf("%-18s %10.3f %10.3f %10.3f %10s\n", "prefault", pf.median, pf.min, pf.p90, "-");
    if (auto csv = p.get("csv")) {
        std::ofstream out(*csv);
        out << "rep,pages,mem_mib,first_instruction_ms,exit_ms,prefault_ms\n";
        for (size_t i = 0; i < first.size(); ++i)
            out << i << ',' << memmap::to_string(o.host_pages) << ',' << (o.ram_bytes >> 20) << ',' << first[i]
                << ',' << exit[i] << ',' << prefault[i] << '\n';
    }
    return 0;
}

const bench::BenchCommandRegistration kRegistered("boot", bench_boot_command);

} // namespace

} // namespace kvmgpu::cli
