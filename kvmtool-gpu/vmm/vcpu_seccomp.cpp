#include "kvmtool-gpu/vmm/vcpu_seccomp.h"

#include "kvmtool-gpu/util/seccomp_bpf.h"
#include "kvmtool-gpu/util/seccomp_report.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kvmtool-gpu/kvm/xsave_ioctls.h"

namespace kvmgpu {

namespace {

using seccomp::arg_lo;
using seccomp::jump;
using seccomp::kAllow;
using seccomp::ret;
using seccomp::stmt;

// What the filter refuses traps to the report (util/seccomp_report.h), which
// names the call on stderr and then ends the VMM with SIGSYS: it is
// compromised or has a bug, and either way goes no further. The trapped call
// never ran.
constexpr uint32_t kRefuse = seccomp::kRefuseAndReport;

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

// glibc sets a stream's buffer up at its first output, with fstat and, for a
// character device, isatty (ioctl TCGETS), which the filter refuses. The
// console's default sink prints to stdout from the vCPU thread, and a program
// embedding the VMM may not have printed before: give stdout its buffer now,
// in the mode glibc would choose (line-buffered on a terminal).
void settle_stdout() {
    static char buffer[BUFSIZ];
    flockfile(stdout); // another thread's first output may not come between
    if (__fbufsize(stdout) == 0) setvbuf(stdout, buffer, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, sizeof buffer);
    funlockfile(stdout);
}

} // namespace

std::vector<sock_filter> vcpu_seccomp_program(int vcpu_fd, bool linux_guest, int vm_fd) {
    seccomp::Program p;
    p.allow(kPlain);
    p.allow(seccomp::sanitizer_runtime_calls());
    if (linux_guest) p.allow(kLinuxGuest);

    // ioctl: the vCPU fd only, and only what the run loop and its result use.
    // Each block below ends in a return on every path (seccomp::Program::guarded).
    // A Linux-ABI guest's vCPU also sets the file window's memory slots
    // (file_window.h) on the VM fd: KVM_SET_USER_MEMORY_REGION, nothing else
    // (with no VM fd given, a number no descriptor has: never matches).
    const uint32_t slots_fd = linux_guest && vm_fd >= 0 ? static_cast<uint32_t>(vm_fd) : 0xffffffffu;
    const sock_filter ioctl_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(0)),
        jump(BPF_JMP | BPF_JEQ | BPF_K, slots_fd, 0, 2),
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(1)),
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_SET_USER_MEMORY_REGION, 12, 11),
        jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(vcpu_fd), 0, 10),
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(1)),
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_RUN, 9, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_GET_REGS, 8, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_GET_SREGS, 7, 0),
        // CR3 loads the ring-3 guest asks for (CPU control device).
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_SET_SREGS, 6, 0),
        // The return from a Linux-ABI guest's system call, and its signal
        // frames' FPU state: the legacy one, or the XSAVE area where the
        // guest has XSAVE (never match otherwise: KVM_RUN again).
        jump(BPF_JMP | BPF_JEQ | BPF_K, linux_guest ? KVM_SET_REGS : KVM_RUN, 5, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, linux_guest ? KVM_GET_FPU : KVM_RUN, 4, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, linux_guest ? KVM_SET_FPU : KVM_RUN, 3, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, linux_guest ? static_cast<uint32_t>(kGetXsave) : KVM_RUN, 2, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, linux_guest ? static_cast<uint32_t>(kSetXsave) : KVM_RUN, 1, 0),
        ret(kRefuse),
        ret(kAllow),
    };
    // mmap, mprotect: never executable memory.
    const sock_filter no_exec_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(2)),
        jump(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        ret(kRefuse),
        ret(kAllow),
    };
    // newfstatat: only fstat(fd), which glibc issues as (fd, "", buf, AT_EMPTY_PATH).
    const sock_filter fstat_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(3)),
        jump(BPF_JMP | BPF_JEQ | BPF_K, AT_EMPTY_PATH, 1, 0),
        ret(kRefuse),
        ret(kAllow),
    };
    p.guarded(SYS_ioctl, ioctl_block);
    // A Linux-ABI guest's mmap: also never a shared mapping of a descriptor
    // (the file window maps the guest's files MAP_PRIVATE; anonymous memory
    // has no descriptor).
    const sock_filter linux_mmap_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(2)),
        jump(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 3, 0),
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(3)),
        jump(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 2, 0),
        jump(BPF_JMP | BPF_JSET | BPF_K, MAP_SHARED, 0, 1), // MAP_SHARED_VALIDATE has this bit too
        ret(kRefuse),
        ret(kAllow),
    };
    if (linux_guest) p.guarded(SYS_mmap, linux_mmap_block);
    else p.guarded(SYS_mmap, no_exec_block);
    p.guarded(SYS_mprotect, no_exec_block);
    p.guarded(SYS_newfstatat, fstat_block);
    // Linux-ABI guests: glibc opens files of its own on the serving thread
    // (PyTorch's guest drove it to an openat(AT_FDCWD, ..., O_RDONLY |
    // O_CLOEXEC) from inside libc). Read-only openat is allowed: it reaches
    // nothing the allowed openat2 does not; anything that writes or creates
    // is still refused.
    const sock_filter read_only_openat_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(2)),
        jump(BPF_JMP | BPF_JSET | BPF_K, O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND, 1, 0),
        ret(kAllow),
        ret(kRefuse),
    };
    if (linux_guest) p.guarded(SYS_openat, read_only_openat_block);
    return p.finish(kRefuse);
}

void confine_vcpu_thread(int vcpu_fd, bool linux_guest, int vm_fd) {
    seccomp::report_refused_calls({"kvmtool-gpu", "the vCPU thread's seccomp filter",
                                   "ending the VMM (a bug: please report it with the guest that did this)"});
    settle_stdout();
    // flags 0: no SECCOMP_FILTER_FLAG_TSYNC, so only this thread is confined.
    seccomp::install(vcpu_seccomp_program(vcpu_fd, linux_guest, vm_fd), 0, "vCPU seccomp",
                     " (run with --no-seccomp to go without)");
}

} // namespace kvmgpu
