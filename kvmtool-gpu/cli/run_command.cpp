#include "kvmtool-gpu/cli/run_command.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <exception>
#include <optional>
#include <set>
#include <thread>

#include "kvmgpu/kvmgpu.hpp"
#include "kvmtool-gpu/bench/topology_probe.h"
#include "kvmtool-gpu/cli/interrupt_stop.h"
#include "kvmtool-gpu/cli/run_many.h"
#include "kvmtool-gpu/cli/share_flag.h"
#include "kvmtool-gpu/cli/vgpu_report.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"
#include "kvmtool-gpu/util/log.h"
#include "memmap/backing.h"
#include "memmap/memmap_log.h"

namespace kvmgpu::cli {

namespace {
constexpr uint64_t kMaxVms = 16;
} // namespace

const char* run_help() {
    static std::string text;
    if (!text.empty()) return text.c_str();
    char buf[16384]; // the vGPU options alone are over 4 KiB
    std::snprintf(buf, sizeof buf, "usage: kvmtool-gpu run --guest <image|name> [options] [-- guest arguments]\n"
           "\n"
           "Boots a guest on KVM (or several at once: --vms) and reports how it ended.\n"
           "\n"
           "  --guest IMAGE|NAME  ELF image, or the name of a built guest (hello, vecadd, ...)\n"
           "  --mem SIZE          guest RAM, e.g. 512M, 2G (default 512M; multiple of 2M)\n"
           "  --pages auto|4K|2M|1G  host pages backing guest RAM (default auto: 2M where the\n"
           "                      huge-page pool has room for all of it, else 4K; 2M/1G need\n"
           "                      reserved huge pages: echo N > /proc/sys/vm/nr_hugepages)\n"
           "  --prefault          fault in all guest RAM before boot (timed separately)\n"
           "  --timeout S         stop a guest that runs longer than S seconds (default 60; 0 = never)\n"
           "  --cmdline STR       argument string passed to the guest (key=value words)\n"
           "  --seed N            seed for the guest's scattered page allocator (default 1); for a\n"
           "                      Linux-ABI guest also its getrandom and AT_RANDOM (stack canaries),\n"
           "                      which without --seed come from the host's getrandom\n"
           "  --quiet             print only the result line, warnings and errors (no console\n"
           "                      lines; with --stdio raw the guest's own output still comes)\n"
           "  --stdio console|raw  where the guest's standard streams go (default console):\n"
           "                      console: stdin is empty, stdout and stderr become \"guest: \"\n"
           "                      lines on stdout, control bytes escaped, 16 MiB at most;\n"
           "                      raw: a Linux-ABI guest reads this shell's stdin and writes\n"
           "                      its stdout and stderr byte for byte, as it would natively\n"
           "                      (pipes, redirections, a terminal it may query but never\n"
           "                      set); this tool's own lines go to stderr and its exit\n"
           "                      status is the guest's exit code. One VM (--vms 1)\n"
           "  --no-seccomp        do not confine the vCPU thread with its seccomp filter\n"
           "\n"
           "A Linux-ABI guest is an x86-64 Linux executable, static or dynamic; the\n"
           "VMM serves its system calls (docs/runtime-api.md):\n"
           "  -- ARGS...          its argv[1..] (argv[0] is the file's name; with --root, its path there)\n"
           "  --env K=V           add to its environment (repeatable; HOME=/ PATH=/ TERM=dumb given)\n"
           "  --root DIR          DIR is its read-only \"/\": a dynamic executable's interpreter\n"
           "                      and libraries come from there. --root / offers the host's\n"
           "                      files: the guest can read every file and list every\n"
           "                      directory this user can (home directories, /etc, keys\n"
           "                      readable by this user included) and write none; never\n"
           "                      the host's /proc, /sys or devices (the VMM serves its own).\n"
           "                      HOME and TMPDIR are then /tmp/kvmgpu-vm, a writable directory\n"
           "                      of the VM's own, removed at its end (unless a --share is at /tmp)\n"
           "  --share DIR[:GUEST_PATH][:ro]  DIR read-write (:ro refuses writes) at\n"
           "                      GUEST_PATH; without --root it is \"/\"; with --root the\n"
           "                      default GUEST_PATH is DIR's own absolute path. Repeatable,\n"
           "                      each at its own GUEST_PATH (the longest that prefixes a\n"
           "                      path takes it; symlinks and \"..\" never leave the mount\n"
           "                      they start in; rename and link across mounts: EXDEV).\n"
           "                      With --vms N, VM i gets DIR/vm<i> (made if missing), or\n"
           "                      DIR itself for every VM with :ro\n"
           "  --cwd GUEST_PATH    its working directory, a directory in its mounts (relative\n"
           "                      paths, getcwd, chdir). Default: this shell's current\n"
           "                      directory where the guest sees it at the same path (with\n"
           "                      --root /, or in a --share at its own path), else \"/\"\n"
           "  --no-libcuda-overlay  the guest's libcuda.so* are the root's own files; by\n"
           "                      default every libcuda.so* of the root and shares, and\n"
           "                      libcuda.so.1 in /lib, /usr/lib (and lib64, x86_64-linux-gnu),\n"
           "                      are the VMM's guest libcuda.so.1 (guests/lib), read-only:\n"
           "                      the host driver's cannot work in a VM (docs/libcuda.md)\n"
           "  --no-sync-regs      return from its system calls with KVM_GET/SET ioctls instead\n"
           "                      of KVM_CAP_SYNC_REGS (to compare their cost)\n"
           "  --no-vdso           no vDSO: every clock read (clock_gettime, gettimeofday,\n"
           "                      time) is a system call, as before the vDSO (to compare)\n"
           "  --no-file-window    read-only files the guest maps are copied into its RAM\n"
           "                      instead of mapped through KVM memory slots (to compare)\n"
           "  --trace-syscalls FILE  write each system call the guest makes to FILE, a line\n"
           "                      each (thread, name, arguments, paths as strings, result\n"
           "                      or errno), as strace would; with --vms, FILE.vm<i>\n"
           "  --max-threads N     threads alive at once, the first included (default 64; each\n"
           "                      is a vCPU; past it pthread_create gets EAGAIN)\n"
           "  --futex-spin-us N   a futex wait first watches its word N us (default 0, at most\n"
           "                      10000): a thread woken by another resumes without waiting\n"
           "                      for the waker's system call to reach the VMM, for a core's\n"
           "                      time while it watches\n"
           "\n"
           "  --vms N             boot N guests of the image at once (1..16, default 1), each\n"
           "                      a VM with its own vGPU: GPU worker, context, quotas and\n"
           "                      doorbell, sharing the GPU; with --seed S their seeds are S, S + 1, ...\n"
           "%s"
           "\n"
           "Ctrl-C (or SIGTERM) stops every guest of the run cleanly: each reports\n"
           "'interrupted', GPU workers are shut down; a second Ctrl-C quits at once.\n"
           "\n"
           "Exit status: 0 the guest passed its own checks, 1 it failed, faulted, timed\n"
           "out or was interrupted, 2 bad usage or a set-up error; with --stdio raw, the\n"
           "guest's own exit code when it exited.\n",
                  vgpu_options_help());
    text = buf;
    return text.c_str();
}

namespace {

// The vGPU's backend, once up (vgpu_status waits for it). `in_background`:
// it started while the guest ran, so the start-up line only said so.
void print_vgpu_start(std::FILE* out, const Machine& vm, const std::string& attached, const VgpuSpec& spec,
                      bool in_background) {
    const VgpuStatus s = vm.vgpu_status();
    const std::string& backend = attached.empty() || in_background ? s.backend : attached;
    std::fprintf(out, "kvmtool-gpu: vGPU backend: %s; doorbell %s; guest RAM registration %s (%.1f ms); up %.1f ms after "
                "the device started\n",
                backend.c_str(), to_string(spec.doorbell), s.ram_registered ? "ok" : "FAILED (no zero-copy)",
                s.registration_ns * 1e-6, s.ready_after_ns * 1e-6);
}

// The result line to `out`, the rest of the report to `detail`.
void print_result(std::FILE* out, std::FILE* detail, const Result& r, bool prefault) {
    const double ms = 1e-6;
    std::fprintf(out, "kvmtool-gpu: result: %s, exit code %u (%s)\n", to_string(r.outcome), r.exit_code,
                r.passed() ? "pass" : "FAIL");
    if (r.timings.first_instruction_ns) // a Linux-ABI guest writes no boot marker
        std::fprintf(detail, "kvmtool-gpu: timing: first instruction %.3f ms after VM creation (set-up %.3f ms",
                    r.timings.first_instruction_ns * ms, r.timings.setup_ns * ms);
    else
        std::fprintf(detail, "kvmtool-gpu: timing: set-up %.3f ms (no boot marker", r.timings.setup_ns * ms);
    if (prefault) std::fprintf(detail, ", prefault %.3f ms not included", r.timings.prefault_ns * ms);
    std::fprintf(detail, "), run %.3f ms; exits: %llu mmio, %llu pio, %llu total\n", r.timings.run_ns * ms,
                static_cast<unsigned long long>(r.mmio_exits), static_cast<unsigned long long>(r.pio_exits),
                static_cast<unsigned long long>(r.exits));
    std::fprintf(detail, "kvmtool-gpu: guest code: %s\n", r.guest_code.c_str());
    if (!r.syscalls.empty()) std::fprintf(detail, "kvmtool-gpu: system calls: %s\n", r.syscalls.c_str());
    if (!r.passed() && r.outcome != Outcome::GuestExit)
        std::fprintf(stderr, "kvmtool-gpu: error: %s\n%s\n", r.detail.c_str(), r.register_dump.c_str());
}

} // namespace

int run_command(const std::vector<std::string>& all_args) {
    // Everything after "--" is the guest's; --env and --share may repeat.
    std::vector<std::string> args, guest_args, env, shares;
    bool after_dashes = false;
    for (size_t i = 0; i < all_args.size(); ++i) {
        const std::string& a = all_args[i];
        if (after_dashes) guest_args.push_back(a);
        else if (a == "--") after_dashes = true;
        else if (a == "--env" || a.rfind("--env=", 0) == 0) {
            std::string kv = a == "--env" ? (i + 1 < all_args.size() ? all_args[++i] : "") : a.substr(6);
            if (kv.find('=') == std::string::npos || kv.front() == '=')
                throw UsageError("--env needs K=V, got '" + kv + "'");
            env.push_back(kv);
        } else if (a == "--share" || a.rfind("--share=", 0) == 0) {
            if (a == "--share" && i + 1 >= all_args.size()) throw UsageError("--share needs a value");
            shares.push_back(a == "--share" ? all_args[++i] : a.substr(8));
        } else args.push_back(a);
    }
    std::set<std::string> valued = {"guest", "mem", "pages", "timeout", "cmdline", "seed", "vms", "root", "cwd", "max-threads", "trace-syscalls", "futex-spin-us", "stdio"};
    valued.insert(vgpu_option_names().begin(), vgpu_option_names().end());
    ArgParser p(valued, {"prefault", "quiet", "no-seccomp", "no-sync-regs", "no-vdso", "no-file-window", "no-libcuda-overlay", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(run_help(), stdout);
        return 0;
    }
    const auto guest = p.get("guest");
    if (!guest) throw UsageError("run needs --guest <image|name> (see kvmtool-gpu run --help)");

    VmConfig c;
    c.guest = *guest;
    c.ram_bytes = parse_size(p.get_or("mem", "512M"), "--mem");
    const uint64_t vms = parse_u64(p.get_or("vms", "1"), "--vms");
    if (vms == 0 || vms > kMaxVms) throw UsageError("--vms: 1.." + std::to_string(kMaxVms));
    // Before anything is built: VMs of this process share its open files,
    // host mappings and huge-page pool evenly.
    set_vms_in_process(static_cast<unsigned>(vms));
    const std::string pages = p.get_or("pages", "auto");
    if (pages != "auto") {
        memmap::PageSize size;
        if (!memmap::parse_page_size(pages, &size))
            throw UsageError("--pages '" + pages + "': expected auto, 4K, 2M or 1G");
        c.pages = size == memmap::PageSize::k1G ? PageSize::k1G
                  : size == memmap::PageSize::k2M ? PageSize::k2M
                                                  : PageSize::k4K;
    }
    c.prefault = p.has("prefault");
    c.timeout_s = parse_seconds(p.get_or("timeout", "60"), "--timeout", VcpuWatchdog::kMaxTimeoutS);
    c.cmdline = p.get_or("cmdline", "");
    if (auto seed = p.get("seed")) c.seed = parse_u64(*seed, "--seed");
    if (p.has("quiet")) { // informational lines go too; warnings and errors still come
        c.console = [](std::string_view) {};
        set_log_level(LogLevel::Warn);
        memmap::set_log_sink([](std::string_view) {});
    }
    c.seccomp = !p.has("no-seccomp");
    c.args = guest_args;
    c.env = env;
    c.sync_regs = !p.has("no-sync-regs");
    c.vdso = !p.has("no-vdso");
    c.file_window = !p.has("no-file-window");
    if (auto trace = p.get("trace-syscalls")) {
        if (trace->empty()) throw UsageError("--trace-syscalls needs a file");
        c.syscall_trace = *trace;
    }
    const uint64_t max_threads = parse_u64(p.get_or("max-threads", "64"), "--max-threads");
    if (max_threads == 0 || max_threads > 1024) throw UsageError("--max-threads: 1..1024");
    c.max_threads = static_cast<uint32_t>(max_threads);
    const uint64_t futex_spin = parse_u64(p.get_or("futex-spin-us", "0"), "--futex-spin-us");
    if (futex_spin > 10'000) throw UsageError("--futex-spin-us: 0..10000");
    c.futex_spin_us = static_cast<uint32_t>(futex_spin);
    if (auto root = p.get("root")) {
        if (root->empty()) throw UsageError("--root needs a directory");
        c.root = *root;
    }
    for (const std::string& share : shares) {
        const linux_abi::ShareSpec s = parse_share_flag(share);
        c.shares.push_back({s.dir, s.guest_path, s.read_only});
    }
    if (auto cwd = p.get("cwd")) c.cwd = *cwd;
    c.libcuda_overlay = !p.has("no-libcuda-overlay");
    const std::string stdio = p.get_or("stdio", "console");
    if (stdio != "console" && stdio != "raw") throw UsageError("--stdio '" + stdio + "': expected console or raw");
    c.raw_stdio = stdio == "raw";
    if (c.raw_stdio && vms > 1) throw UsageError("--stdio raw lends this shell's streams to one guest: not with --vms");
    c.vgpu = parse_vgpu_spec(p);
    if (vms > 1) return run_many(c, static_cast<unsigned>(vms));

    // Held by pointer: its destruction (the vGPU's and guest RAM's tear-down) is timed.
    auto machine = std::make_unique<Machine>(c);
    Machine& vm = *machine;
    // With the guest's stdout its own, this tool's lines stay out of it.
    std::FILE* const report = c.raw_stdio ? stderr : stdout;
    // --quiet: everything but the result line goes nowhere.
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> nowhere(p.has("quiet") ? std::fopen("/dev/null", "w") : nullptr,
                                                                   [](std::FILE* f) { return std::fclose(f); });
    std::FILE* const detail = nowhere ? nowhere.get() : report;
    const MachineSummary info = vm.info();
    for (const std::string& note : info.notes) std::fprintf(detail, "kvmtool-gpu: %s\n", note.c_str());
    std::fprintf(detail, "kvmtool-gpu: vCPU backend: %s; guest %s%s; RAM %lluM on %s host pages%s%s\n", info.kvm.c_str(),
                info.guest_path.c_str(), info.cwd.empty() ? "" : ("; cwd " + info.cwd).c_str(),
                static_cast<unsigned long long>(info.ram_bytes >> 20), info.host_pages.c_str(),
                pages == "auto" ? " (--pages auto)" : "", info.libcuda.empty() ? "" : ("; libcuda: " + info.libcuda).c_str());
    if (c.vgpu && c.vgpu->sharing) std::fprintf(detail, "kvmtool-gpu: GPU sharing: %s\n", c.vgpu->sharing->describe().c_str());
    else if (c.vgpu) std::fprintf(detail, "kvmtool-gpu: GPU sharing: contexts\n");
    std::optional<StopOnInterrupt> stop_on_ctrl_c(std::in_place, [&vm](int) { vm.stop(); });
    bool printed_start = false;
    if (c.vgpu) {
        // A GPU worker starts CUDA while the guest runs: then the backend and
        // its registration are reported after the run (print_vgpu_start).
        if (info.vgpu_ready) {
            print_vgpu_start(detail, vm, info.vgpu_backend, *c.vgpu, false);
            printed_start = true;
        } else {
            std::fprintf(detail, "kvmtool-gpu: vGPU backend: %s; doorbell %s\n", info.vgpu_backend.c_str(),
                        to_string(c.vgpu->doorbell));
        }
        // Several devices: where each pair lives (probed in a child process).
        if (c.vgpu->gpus.size() > 1) {
            vgpu::BackendChoice backend = vgpu::BackendChoice::Auto;
            vgpu::parse_backend_choice(p.get_or("vgpu", "auto"), &backend); // checked by parse_vgpu_spec
            for (const auto& line : kvmgpu::bench::device_pair_lines(kvmgpu::bench::probe_topology(c.vgpu->gpus, backend),
                                                                     c.vgpu->gpus))
                std::fprintf(detail, "kvmtool-gpu: vGPU: %s\n", line.c_str());
        }
    } else {
        std::fprintf(detail, "kvmtool-gpu: vGPU: none (--vgpu none)\n");
    }
    std::fflush(detail);
    // With seccomp the vCPU runs on a thread of the library's, which run()
    // confines: what follows (results, vGPU and CUDA teardown) runs unconfined here.
    const Result r = vm.run();
    print_result(report, detail, r, c.prefault);
    if (c.vgpu && !printed_start) print_vgpu_start(detail, vm, info.vgpu_backend, *c.vgpu, true);
    if (c.vgpu) {
        const VgpuCounters n = vm.vgpu_counters();
        std::fprintf(detail, "kvmtool-gpu: vGPU: %s; guest RAM registered with the GPU: %.1f MiB in %.1f ms (%s)\n",
                    describe_commands(n).c_str(),
                    static_cast<double>(n.ram_registered_bytes) / (1 << 20), n.ram_register_ns * 1e-6,
                    c.vgpu->lazy_ram_registration ? "lazily, as copies reached it" : "all, at start");
    }
    // What a program pays after it exits: the GPU worker's and CUDA's stop,
    // guest RAM unmapped (part of the fixed cost a short program sees).
    stop_on_ctrl_c.reset();
    const auto torn_from = std::chrono::steady_clock::now();
    machine.reset();
    const double tear_down_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - torn_from).count();
    std::fprintf(detail, "kvmtool-gpu: tear-down %.1f ms (vGPU and guest RAM)\n", tear_down_ms);
    if (c.raw_stdio) return r.outcome == Outcome::GuestExit ? static_cast<int>(r.exit_code & 0xff) : 1;
    return r.passed() ? 0 : 1;
}

} // namespace kvmgpu::cli
