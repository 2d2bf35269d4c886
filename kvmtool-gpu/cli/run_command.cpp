#include "kvmtool-gpu/cli/run_command.h"

#include <cstdio>
#include <exception>
#include <optional>
#include <set>
#include <thread>

#include "kvmtool-gpu/bench/topology_probe.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/cli/interrupt_stop.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/kvm/open_kvm.h"
#include "kvmtool-gpu/cli/run_many.h"
#include "kvmtool-gpu/cli/share_flag.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/devices/vgpu/alias_budget.h"
#include "kvmtool-gpu/kvm/kvm_flavor.h"
#include "kvmtool-gpu/kvm/kvm_system.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"
#include "kvmtool-gpu/util/process_limits.h"
#include "memmap/huge_page_pool.h"

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
           "  --quiet             print only the result line\n"
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
           "\n"
           "  --vms N             boot N guests of the image at once (1..16, default 1), each\n"
           "                      a VM with its own vGPU: GPU worker, context, quotas and\n"
           "                      doorbell, sharing the GPU; seeds --seed, --seed + 1, ...\n"
           "%s"
           "\n"
           "Ctrl-C (or SIGTERM) stops every guest of the run cleanly: each reports\n"
           "'interrupted', GPU workers are shut down; a second Ctrl-C quits at once.\n"
           "\n"
           "Exit status: 0 the guest passed its own checks, 1 it failed, faulted, timed\n"
           "out or was interrupted, 2 bad usage or a set-up error.\n",
                  vgpu_options_help());
    text = buf;
    return text.c_str();
}

namespace {

// --pages auto: 2 MiB pages where the pool can back all guest RAM of the run
// (registering guest RAM with CUDA, and the TLB, cost far less on them),
// else 4 KiB.
memmap::PageSize pages_for(uint64_t ram_bytes) {
    const auto pool = memmap::read_huge_page_pool(memmap::PageSize::k2M);
    const uint64_t needed = (ram_bytes + (2ull << 20) - 1) >> 21;
    return pool && pool->available() >= needed ? memmap::PageSize::k2M : memmap::PageSize::k4K;
}

// Each guest's descriptor table: its 3 console descriptors and what the
// process's open-file limit leaves each VM (util/process_limits.h).
int guest_descriptor_table(uint64_t vms, uint64_t max_threads) {
    constexpr uint64_t kConsole = 3;
    const uint64_t host = guest_descriptor_limit(open_file_limit(), open_descriptor_count(), vms, max_threads,
                                                 linux_abi::kMaxFds - kConsole);
    if (host + kConsole < linux_abi::kMaxFds)
        std::printf("kvmtool-gpu: open-file limit %llu (ulimit -n) shared by %llu VM(s): each Linux-ABI guest may hold "
                    "%llu descriptors\n",
                    static_cast<unsigned long long>(open_file_limit()), static_cast<unsigned long long>(vms),
                    static_cast<unsigned long long>(host + kConsole));
    return static_cast<int>(host + kConsole);
}

// The backend, once up. `in_background`: it started while the guest ran, so
// the factory's note only said so and the description names it.
void print_vgpu_start(const AttachedVgpu& v, const VgpuConfig& cfg, bool in_background) {
    const std::string& backend =
        v.backend_note.empty() || in_background ? v.device->backend_description() : v.backend_note;
    std::printf("kvmtool-gpu: vGPU backend: %s; doorbell %s; guest RAM registration %s (%.1f ms); up %.1f ms after "
                "the device started\n",
                backend.c_str(), vgpu::to_string(cfg.options.doorbell),
                v.device->registration_status() == VGPU_SUCCESS ? "ok" : "FAILED (no zero-copy)",
                v.device->registration_ns() * 1e-6, v.device->ready_after_ns() * 1e-6);
}

// Sets the guest libcuda the VMM lends a Linux-ABI guest with files (the
// overlay, library_overlay.h) and says which libcuda the guest gets, for the
// start-up line; "" when the guest has no files.
std::string choose_guest_libcuda(linux_abi::LinuxGuestOptions& l, bool overlay_off) {
    if (l.root_dir.empty() && l.shares.empty()) return "";
    if (overlay_off) return "; libcuda: the root's own (--no-libcuda-overlay)";
    const auto ours = locate_guest_library("libcuda.so.1");
    if (!ours) {
        std::string looked;
        for (const auto& d : guest_dirs()) looked += (looked.empty() ? "" : ", ") + d + "/lib";
        return "; libcuda: the root's own (no libcuda.so.1 in " + looked + ")";
    }
    l.libcuda_overlay = *ours;
    return "; libcuda: " + *ours + " (the VMM's, for every libcuda.so*)";
}

void print_result(const RunResult& r, const VirtualMachine& vm) {
    const double ms = 1e-6;
    std::printf("kvmtool-gpu: result: %s, exit code %u (%s)\n", to_string(r.outcome), r.exit_code,
                r.passed() ? "pass" : "FAIL");
    if (r.timings.first_instruction_ns) // a Linux-ABI guest writes no boot marker
        std::printf("kvmtool-gpu: timing: first instruction %.3f ms after VM creation (set-up %.3f ms",
                    r.timings.first_instruction_ns * ms, r.timings.setup_ns * ms);
    else
        std::printf("kvmtool-gpu: timing: set-up %.3f ms (no boot marker", r.timings.setup_ns * ms);
    if (vm.options().prefault) std::printf(", prefault %.3f ms not included", r.timings.prefault_ns * ms);
    std::printf("), run %.3f ms; exits: %llu mmio, %llu pio, %llu total\n", r.timings.run_ns * ms,
                static_cast<unsigned long long>(r.exits.mmio), static_cast<unsigned long long>(r.exits.pio),
                static_cast<unsigned long long>(r.exits.total));
    std::printf("kvmtool-gpu: guest code: %s\n", r.execution.describe().c_str());
    if (!r.syscalls.empty()) std::printf("kvmtool-gpu: system calls: %s\n", r.syscalls.c_str());
    if (!r.passed() && r.outcome != RunOutcome::GuestExit)
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
    std::set<std::string> valued = {"guest", "mem", "pages", "timeout", "cmdline", "seed", "vms", "root", "cwd", "max-threads", "trace-syscalls"};
    valued.insert(vgpu_option_names().begin(), vgpu_option_names().end());
    ArgParser p(valued, {"prefault", "quiet", "no-seccomp", "no-sync-regs", "no-vdso", "no-file-window", "no-libcuda-overlay", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(run_help(), stdout);
        return 0;
    }
    const auto guest = p.get("guest");
    if (!guest) throw UsageError("run needs --guest <image|name> (see kvmtool-gpu run --help)");

    VmOptions o;
    o.ram_bytes = parse_size(p.get_or("mem", "512M"), "--mem");
    const uint64_t vms = parse_u64(p.get_or("vms", "1"), "--vms");
    if (vms == 0 || vms > kMaxVms) throw UsageError("--vms: 1.." + std::to_string(kMaxVms));
    const std::string pages = p.get_or("pages", "auto");
    if (pages == "auto") o.host_pages = pages_for(o.ram_bytes * vms);
    else if (!memmap::parse_page_size(pages, &o.host_pages))
        throw UsageError("--pages '" + pages + "': expected auto, 4K, 2M or 1G");
    o.prefault = p.has("prefault");
    o.timeout_s = parse_seconds(p.get_or("timeout", "60"), "--timeout", VcpuWatchdog::kMaxTimeoutS);
    o.cmdline = p.get_or("cmdline", "");
    o.seed = parse_u64(p.get_or("seed", "1"), "--seed");
    o.linux.seeded = p.get("seed").has_value();
    if (p.has("quiet")) o.console = [](std::string_view) {};
    o.seccomp = !p.has("no-seccomp");
    o.guest_path = locate_guest(*guest);
    o.linux.args = guest_args;
    o.linux.env = env;
    o.linux.sync_regs = !p.has("no-sync-regs");
    o.linux.vdso = !p.has("no-vdso");
    o.linux.file_window = !p.has("no-file-window");
    if (auto trace = p.get("trace-syscalls")) {
        if (trace->empty()) throw UsageError("--trace-syscalls needs a file");
        o.linux.syscall_trace = *trace;
    }
    const uint64_t max_threads = parse_u64(p.get_or("max-threads", "64"), "--max-threads");
    if (max_threads == 0 || max_threads > 1024) throw UsageError("--max-threads: 1..1024");
    o.linux.max_threads = static_cast<uint32_t>(max_threads);
    o.linux.max_fds = guest_descriptor_table(vms, max_threads);
    if (auto root = p.get("root")) {
        if (root->empty()) throw UsageError("--root needs a directory");
        o.linux.root_dir = *root;
    }
    for (const std::string& share : shares) o.linux.shares.push_back(parse_share_flag(share));
    if (auto cwd = p.get("cwd")) o.linux.cwd = *cwd;
    const std::string libcuda = choose_guest_libcuda(o.linux, p.has("no-libcuda-overlay"));
    validate_options(o);
    // Chosen (and checked) before the VM starts, so the start-up line can say
    // it. With --vms and no --cwd each VM takes its own default: a writable
    // share is then DIR/vm<i>, which holds none of the shell's directories.
    const bool has_files = !o.linux.root_dir.empty() || !o.linux.shares.empty();
    std::string cwd_note;
    if (!o.linux.cwd.empty() || (has_files && vms == 1)) {
        o.linux.cwd = linux_abi::guest_start_cwd(o.linux);
        cwd_note = "; cwd " + o.linux.cwd;
    } else if (has_files) {
        cwd_note = "; cwd each VM's default (--cwd)";
    }
    auto vgpu_cfg = parse_vgpu_flags(p);
    // One VM: all of the GPU's memory, as a program has natively (PyTorch's
    // caching allocator sizes itself by it); several: each its own quota.
    if (vgpu_cfg && vms == 1 && !p.has("gpu-mem-quota")) vgpu_cfg->options.device_mem_quota = vgpu::kWholeDeviceQuota;

    KvmSystem kvm = open_kvm();
    std::printf("kvmtool-gpu: vCPU backend: %s; guest %s%s; RAM %lluM on %s host pages%s%s\n",
                detect_kvm_flavor().describe().c_str(), o.guest_path.c_str(),
                cwd_note.c_str(),
                static_cast<unsigned long long>(o.ram_bytes >> 20), std::string(memmap::to_string(o.host_pages)).c_str(),
                pages == "auto" ? " (--pages auto)" : "", libcuda.c_str());
    if (vgpu_cfg && vgpu_cfg->share) std::printf("kvmtool-gpu: GPU sharing: %s\n", vgpu_cfg->share->describe().c_str());
    std::fflush(stdout);
    // VMs whose device models share this process share its mappings evenly.
    vgpu::AliasBudget::process().set_vms_sharing(vms);
    if (vms > 1) return run_many(kvm, o, vgpu_cfg, static_cast<unsigned>(vms));
    VirtualMachine vm(kvm, o);
    StopOnInterrupt stop_on_ctrl_c([&vm](int) { vm.request_stop(); });
    std::optional<AttachedVgpu> vgpu;
    bool printed_start = false;
    if (vgpu_cfg) {
        vgpu = attach_vgpu(vm, *vgpu_cfg);
        // The factory's note names the backend and, on a fallback, why; it
        // replaces the bare description rather than repeating it.
        // A GPU worker starts CUDA while the guest runs: then the backend and
        // its registration are reported after the run (print_vgpu_start).
        if (vgpu->device->ready()) {
            print_vgpu_start(*vgpu, *vgpu_cfg, false);
            printed_start = true;
        } else {
            std::printf("kvmtool-gpu: vGPU backend: %s; doorbell %s\n", vgpu->backend_note.c_str(),
                        vgpu::to_string(vgpu_cfg->options.doorbell));
        }
        // Several devices: where each pair lives (probed in a child process).
        if (vgpu_cfg->gpus.size() > 1)
            kvmgpu::bench::print_device_pairs("kvmtool-gpu: vGPU",
                                              kvmgpu::bench::probe_topology(vgpu_cfg->gpus, vgpu_cfg->backend),
                                              vgpu_cfg->gpus);
    } else {
        std::printf("kvmtool-gpu: vGPU: none (--vgpu none)\n");
    }
    std::fflush(stdout);
    // The vCPU runs on a thread of its own, which run() confines with seccomp:
    // what follows (results, vGPU and CUDA teardown) runs unconfined here.
    RunResult r;
    std::exception_ptr failed;
    std::thread vcpu([&] {
        try {
            r = vm.run();
        } catch (...) {
            failed = std::current_exception();
        }
    });
    vcpu.join();
    if (failed) std::rethrow_exception(failed);
    print_result(r, vm);
    if (vgpu && !printed_start) print_vgpu_start(*vgpu, *vgpu_cfg, true);
    if (vgpu) {
        const auto c = vgpu->device->counters();
        std::printf("kvmtool-gpu: vGPU: %llu commands, %llu errors; guest RAM registered with the GPU: %.1f MiB "
                    "in %.1f ms (%s)\n",
                    (unsigned long long)c.commands, (unsigned long long)c.errors,
                    static_cast<double>(c.ram_registered_bytes) / (1 << 20), c.ram_register_ns * 1e-6,
                    vgpu_cfg->options.lazy_ram_registration ? "lazily, as copies reached it" : "all, at start");
    }
    return r.passed() ? 0 : 1;
}

} // namespace kvmgpu::cli
