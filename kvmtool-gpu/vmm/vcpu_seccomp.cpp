#include "kvmtool-gpu/vmm/vcpu_seccomp.h"

#include "kvmtool-gpu/util/seccomp_bpf.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/mman.h>
#include <sys/syscall.h>

namespace kvmgpu {

namespace {

using seccomp::arg_lo;
using seccomp::jump;
using seccomp::kAllow;
using seccomp::kKill; // SIGSYS for the whole VMM: it is compromised
using seccomp::ret;
using seccomp::stmt;

// Syscalls allowed whatever their arguments. fstat: glibc 2.39 (Ubuntu
// 24.04, the GPU machine) issues fstat(fd) as SYS_fstat, 2.36 (Debian 12)
// as newfstatat (guarded below); either names an fd the thread already has.
constexpr int kPlain[] = {
    SYS_read,          SYS_write,         SYS_writev,        SYS_futex,          SYS_sched_yield,
    SYS_nanosleep,     SYS_clock_nanosleep, SYS_clock_gettime, SYS_gettimeofday, SYS_time,
    SYS_munmap,        SYS_mremap,        SYS_madvise,       SYS_brk,            SYS_rt_sigreturn,
    SYS_rt_sigprocmask, SYS_restart_syscall, SYS_sigaltstack, SYS_exit,       SYS_exit_group,
    SYS_fstat,         SYS_pread64, /* the vCPU's KVM statistics fd (execution-mode calibration) */
};

// Linux-ABI guests only: the share's files and getrandom (vcpu_seccomp.h says why).
constexpr int kLinuxGuest[] = {SYS_openat2,    SYS_close,     SYS_lseek,   SYS_getdents64, SYS_pwrite64,
                               SYS_readlinkat, SYS_getrandom, SYS_fstatfs, SYS_memfd_create,
                               SYS_pipe2,      SYS_eventfd2,  SYS_ppoll,       SYS_mkdirat,
                               SYS_unlinkat,   SYS_renameat2, SYS_linkat,    SYS_symlinkat};

} // namespace

std::vector<sock_filter> vcpu_seccomp_program(int vcpu_fd, bool linux_guest) {
    seccomp::Program p;
    p.allow(kPlain);
    p.allow(seccomp::sanitizer_runtime_calls());
    if (linux_guest) p.allow(kLinuxGuest);

    // ioctl: the vCPU fd only, and only what the run loop and its result use.
    // Each block below ends in a return on every path (seccomp::Program::guarded).
    const sock_filter ioctl_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(0)),
        jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(vcpu_fd), 0, 8),
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(1)),
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_RUN, 7, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_GET_REGS, 6, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_GET_SREGS, 5, 0),
        // CR3 loads the ring-3 guest asks for (CPU control device).
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_SET_SREGS, 4, 0),
        // The return from a Linux-ABI guest's system call, and its signal
        // frames' FPU state (never match otherwise: KVM_RUN again).
        jump(BPF_JMP | BPF_JEQ | BPF_K, linux_guest ? KVM_SET_REGS : KVM_RUN, 3, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, linux_guest ? KVM_GET_FPU : KVM_RUN, 2, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, linux_guest ? KVM_SET_FPU : KVM_RUN, 1, 0),
        ret(kKill),
        ret(kAllow),
    };
    // mmap, mprotect: never executable memory.
    const sock_filter no_exec_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(2)),
        jump(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        ret(kKill),
        ret(kAllow),
    };
    // newfstatat: only fstat(fd), which glibc issues as (fd, "", buf, AT_EMPTY_PATH).
    const sock_filter fstat_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(3)),
        jump(BPF_JMP | BPF_JEQ | BPF_K, AT_EMPTY_PATH, 1, 0),
        ret(kKill),
        ret(kAllow),
    };
    p.guarded(SYS_ioctl, ioctl_block);
    p.guarded(SYS_mmap, no_exec_block);
    p.guarded(SYS_mprotect, no_exec_block);
    p.guarded(SYS_newfstatat, fstat_block);
    return p.finish(kKill);
}

void confine_vcpu_thread(int vcpu_fd, bool linux_guest) {
    // flags 0: no SECCOMP_FILTER_FLAG_TSYNC, so only this thread is confined.
    seccomp::install(vcpu_seccomp_program(vcpu_fd, linux_guest), 0, "vCPU seccomp",
                     " (run with --no-seccomp to go without)");
}

} // namespace kvmgpu
