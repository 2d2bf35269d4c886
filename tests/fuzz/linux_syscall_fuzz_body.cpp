#include "tests/fuzz/linux_syscall_fuzz_body.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/vmm/linux/syscall_server.h"
#include "memmap/backing.h"
#include "tests/fuzz/fuzz_input.h"

namespace kvmgpu::fuzz {

namespace {

using namespace kvmgpu::linux_abi;
constexpr uint64_t kMiB = 1ull << 20, kRam = 16 * kMiB;

[[noreturn]] void violation(const char* what, uint64_t nr) {
    std::fprintf(stderr, "linux_syscall_fuzz: VIOLATION: %s (system call %llu)\n", what, (unsigned long long)nr);
    __builtin_trap();
}

// The share: a scratch directory made once per process (removed at its
// exit), read-only to the server so inputs cannot fill the disk.
struct ScratchShare {
    std::string dir;
    ScratchShare() {
        char tmpl[] = "/tmp/kvmgpu-syscall-fuzz-XXXXXX";
        if (!mkdtemp(tmpl)) std::abort();
        dir = tmpl;
        std::ofstream(dir + "/input.txt") << "fuzz input file\n";
        std::filesystem::create_directory(dir + "/sub");
    }
    ~ScratchShare() {
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    }
};

const std::string& share_dir() {
    static const ScratchShare share;
    return share.dir;
}

constexpr uint64_t kServed[] = {
    SYS_brk, SYS_mmap, SYS_munmap, SYS_mprotect, SYS_mremap, SYS_madvise, SYS_read, SYS_write, SYS_pread64,
    SYS_pwrite64, SYS_readv, SYS_writev, SYS_open, SYS_openat, SYS_close, SYS_fstat, SYS_stat, SYS_lstat,
    SYS_newfstatat, SYS_lseek, SYS_ioctl, SYS_readlink, SYS_readlinkat, SYS_access, SYS_faccessat, SYS_getdents64,
    SYS_getcwd, SYS_chdir, SYS_fchdir, SYS_fcntl, SYS_dup, SYS_dup2, SYS_dup3, SYS_arch_prctl, SYS_set_robust_list, SYS_prlimit64,
    SYS_getrlimit, SYS_uname, SYS_sched_getaffinity, SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_futex,
    SYS_getrandom, SYS_clone, SYS_set_tid_address, SYS_gettid, SYS_clock_gettime, SYS_clock_getres, SYS_gettimeofday, SYS_time, SYS_exit_group,
    KVMGPU_LINUX_SYS_ALIAS, SYS_pipe, SYS_pipe2, SYS_eventfd, SYS_eventfd2, SYS_poll, SYS_ppoll, SYS_epoll_create,
    SYS_epoll_create1, SYS_epoll_ctl, SYS_epoll_wait, SYS_epoll_pwait, SYS_kill, SYS_tgkill, SYS_tkill,
    SYS_sigaltstack, SYS_prctl, SYS_select, SYS_pselect6, SYS_link, SYS_linkat, SYS_symlink, SYS_symlinkat, SYS_chdir, SYS_fchdir,
    SYS_process_vm_readv, SYS_process_vm_writev, SYS_sendfile};

uint64_t pick_arg(Input& in) {
    const uint8_t kind = in.get<uint8_t>();
    const uint64_t raw = in.get<uint64_t>();
    switch (kind % 8) {
    case 0: return raw;                             // anything
    case 1: return raw % kRam;                      // inside RAM
    case 2: return kRam - (raw % 64);               // RAM's last bytes
    case 3: return raw % 8192;                      // page 0 and just past it
    case 4: return 2 * kMiB + (raw % (8 * kMiB));   // the managed range
    case 5: return raw % 300;                       // small numbers: fds, flags, sizes
    case 6: return ~0ull - (raw % 4096);            // wraps
    default: return 0x4000000000ull + raw % 0x3000; // the MMIO window
    }
}

} // namespace

void run_linux_syscall_input(const uint8_t* data, size_t size) {
    Input in(data, size);
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRam));
    ProcessLayout layout;
    layout.managed_lo = 1 * kMiB;
    layout.managed_hi = 12 * kMiB;
    layout.brk_start = 2 * kMiB;
    layout.stack_lo = 14 * kMiB;
    layout.stack_top = kRam;
    layout.unmapped = {{0, 4096}, {12 * kMiB, 14 * kMiB}};
    layout.alias_tables_lo = 0xB000; // as a small guest's boot tables leave free
    layout.alias_tables_hi = KVMGPU_BOOT_TABLES_END;
    ServerOptions opts;
    opts.share = std::make_shared<GuestFs>(std::vector<MountSpec>{{"/", share_dir(), true}});
    opts.console_text = [](std::string_view) {};
    // Inputs of odd length run with the VMM's streams lent (--stdio raw),
    // here /dev/null's, which never block and keep nothing.
    const UniqueFd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC)), null_out(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    if ((size & 1) && null_in && null_out) opts.stdio = HostStdio::take(null_in.get(), null_out.get(), null_out.get());
    SyscallServer server(mem, layout, opts);
    // As at a VM's end: futex waits check their arguments and return EINTR instead of waiting.
    server.request_stop();
    CpuState cpu;
    for (int i = 0; i < 64 && !in.empty(); ++i) {
        SyscallCall call;
        const uint16_t sel = in.get<uint16_t>();
        call.nr = (sel & 0x8000) ? sel % 512 : kServed[sel % std::size(kServed)];
        // Sleeping calls are left out: a fuzzer must not wait on the clock.
        if (call.nr == SYS_nanosleep || call.nr == SYS_clock_nanosleep) continue;
        for (auto& a : call.arg) a = pick_arg(in);
        const SyscallOutcome out = server.serve(call, cpu);
        if (out.clone) server.clone_failed(out.clone->tid); // no VMM here to start the thread
        if (out.ret < 0 && out.ret < -4095) violation("result is neither a value nor an errno", call.nr);
        if (server.address_space().free_bytes() > layout.managed_hi - layout.managed_lo)
            violation("allocator frees more than it manages", call.nr);
        if (server.fds().open_count() > kMaxFds) violation("descriptor table over its limit", call.nr);
        // A signal the calls made pending is taken as at a return to ring 3 (the frame itself: guest_signals_test).
        const PendingSignal pending = server.take_pending(1);
        if (pending.deliver && (pending.deliver->sig < 1 || pending.deliver->sig > 64)) violation("signal out of range", call.nr);
        if (out.exited || !out.stopped.empty()) break;
    }
}

} // namespace kvmgpu::fuzz
