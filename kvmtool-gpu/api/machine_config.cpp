#include "kvmtool-gpu/api/machine_config.h"

#include <cmath>
#include <cstdio>

#include "kvmtool-gpu/api/process_setup.h"
#include "kvmtool-gpu/api/vgpu_spec.h"
#include "kvmtool-gpu/util/process_limits.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"
#include "memmap/huge_page_pool.h"

namespace kvmgpu::api {

namespace {

constexpr uint32_t kMostThreads = 1024;

// PageSize::Auto: 2 MiB pages where the pool can back the guest RAM of every
// VM of the process (registering guest RAM with CUDA, and the TLB, cost far
// less on them), else 4 KiB.
memmap::PageSize host_pages(PageSize p, uint64_t ram_bytes) {
    switch (p) {
    case PageSize::k4K: return memmap::PageSize::k4K;
    case PageSize::k2M: return memmap::PageSize::k2M;
    case PageSize::k1G: return memmap::PageSize::k1G;
    case PageSize::Auto: break;
    }
    const auto pool = memmap::read_huge_page_pool(memmap::PageSize::k2M);
    const uint64_t needed = (ram_bytes * vms_in_process() + (2ull << 20) - 1) >> 21;
    return pool && pool->available() >= needed ? memmap::PageSize::k2M : memmap::PageSize::k4K;
}

// The guest's descriptor table: its 3 console descriptors and what the
// process's open-file limit leaves each VM (util/process_limits.h).
int descriptor_table(uint32_t max_threads, std::vector<std::string>& notes) {
    constexpr uint64_t kConsole = 3;
    const uint64_t vms = vms_in_process();
    const uint64_t host = guest_descriptor_limit(open_file_limit(), open_descriptor_count(), vms, max_threads,
                                                 linux_abi::kMaxFds - kConsole);
    if (host + kConsole < linux_abi::kMaxFds)
        notes.push_back("open-file limit " + std::to_string(open_file_limit()) + " (ulimit -n) shared by " +
                        std::to_string(vms) + " VM(s): each Linux-ABI guest may hold " +
                        std::to_string(host + kConsole) + " descriptors");
    return static_cast<int>(host + kConsole);
}

// Lends a guest with files the VMM's guest libcuda (library_overlay.h) and
// says which libcuda it gets; "" when the guest has no files.
std::string choose_libcuda(linux_abi::LinuxGuestOptions& l, bool overlay) {
    if (l.root_dir.empty() && l.shares.empty()) return "";
    if (!overlay) return "the root's own (no libcuda overlay)";
    const auto ours = locate_guest_library("libcuda.so.1");
    if (!ours) {
        std::string looked;
        for (const auto& d : guest_dirs()) looked += (looked.empty() ? "" : ", ") + d + "/lib";
        return "the root's own (no libcuda.so.1 in " + looked + ")";
    }
    l.libcuda_overlay = *ours;
    return *ours + " (the VMM's, for every libcuda.so*)";
}

void check_numbers(const VmConfig& c) {
    if (c.guest.empty()) throw Error("guest: empty (an ELF path or the name of a built guest)");
    if (!std::isfinite(c.timeout_s) || c.timeout_s < 0 || c.timeout_s > VcpuWatchdog::kMaxTimeoutS)
        throw Error("timeout_s: " + std::to_string(c.timeout_s) + " is not a time-out in seconds (0 means none)");
    if (c.futex_spin_us > 10'000) throw Error("futex_spin_us: 0..10000, got " + std::to_string(c.futex_spin_us));
    if (c.max_threads == 0 || c.max_threads > kMostThreads)
        throw Error("max_threads: 1.." + std::to_string(kMostThreads) + ", got " + std::to_string(c.max_threads));
    for (const Share& s : c.shares)
        if (s.host_dir.empty()) throw Error("shares: a share with no host_dir");
}

} // namespace

CheckedConfig check_config(VmConfig c) {
    check_numbers(c);
    CheckedConfig out;
    if (c.vgpu) out.vgpu = to_vgpu_config(*c.vgpu);
    try {
        VmOptions& o = out.options;
        o.guest_path = locate_guest(c.guest);
        o.ram_bytes = c.ram_bytes;
        o.host_pages = host_pages(c.pages, c.ram_bytes);
        o.host_pages_chosen = c.pages == PageSize::Auto;
        o.prefault = c.prefault;
        o.timeout_s = c.timeout_s;
        o.cmdline = c.cmdline;
        o.seed = c.seed.value_or(1);
        o.seccomp = c.seccomp;
        if (c.console) o.console = std::move(c.console);
        else if (c.raw_stdio) o.console = [](std::string_view line) { // a project image's lines, as they are
            std::fwrite(line.data(), 1, line.size(), stdout);
            std::fputc('\n', stdout);
            std::fflush(stdout);
        };
        linux_abi::LinuxGuestOptions& l = o.linux;
        l.seeded = c.seed.has_value();
        l.args = std::move(c.args);
        l.env = std::move(c.env);
        l.root_dir = c.root;
        for (const Share& s : c.shares) l.shares.push_back({s.host_dir, s.guest_path, s.read_only});
        l.cwd = c.cwd;
        l.sync_regs = c.sync_regs;
        l.vdso = c.vdso;
        l.file_window = c.file_window;
        l.syscall_trace = c.syscall_trace;
        l.max_threads = c.max_threads;
        l.futex_spin_ns = int64_t{c.futex_spin_us} * 1000;
        l.raw_stdio = c.raw_stdio;
        l.max_fds = descriptor_table(c.max_threads, out.notes);
        out.libcuda = choose_libcuda(l, c.libcuda_overlay);
        validate_options(o);
        // Chosen (and checked: a cwd outside the guest's mounts) before the VM starts.
        if (!l.cwd.empty() || !l.root_dir.empty() || !l.shares.empty()) l.cwd = linux_abi::guest_start_cwd(l);
    } catch (const std::exception& e) {
        throw Error(e.what());
    }
    return out;
}

} // namespace kvmgpu::api
