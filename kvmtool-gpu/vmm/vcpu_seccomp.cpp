#include "kvmtool-gpu/vmm/vcpu_seccomp.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/kvm.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <iterator>
#include <span>
#include <system_error>

namespace kvmgpu {

namespace {

constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS; // SIGSYS for the whole VMM: it is compromised
constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;

// Offsets into struct seccomp_data; an argument's low 32 bits (x86-64 is
// little-endian). The kernel takes ioctl's fd and cmd as 32-bit values, and
// mmap/mprotect's prot and fstatat's flags are ints, so the low word is the
// whole of what the kernel looks at.
constexpr uint32_t kNr = offsetof(seccomp_data, nr);
constexpr uint32_t kArch = offsetof(seccomp_data, arch);
constexpr uint32_t arg_lo(int i) { return offsetof(seccomp_data, args) + 8 * i; }

constexpr sock_filter stmt(uint16_t code, uint32_t k) { return BPF_STMT(code, k); }
constexpr sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { return BPF_JUMP(code, k, jt, jf); }

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

// Sanitizer builds (KVMGPU_SANITIZE) only: the ASan/LSan runtime probes
// whether memory is readable by writing it into a pipe (pipe2, write,
// close) and asks for its thread's id and CPUs, also on a confined thread
// (seen at thread exit with detect_stack_use_after_return). Release builds
// do not allow these.
#if defined(__SANITIZE_ADDRESS__)
#define KVMGPU_SECCOMP_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KVMGPU_SECCOMP_SANITIZER 1
#endif
#endif
#ifdef KVMGPU_SECCOMP_SANITIZER
constexpr int kSanitizerOnly[] = {SYS_pipe2, SYS_close, SYS_gettid, SYS_getpid, SYS_sched_getaffinity};
#else
constexpr int kSanitizerOnly[] = {SYS_exit}; // nothing extra (exit is allowed anyway)
#endif

// Linux-ABI guests only: the share's files (vcpu_seccomp.h says why).
constexpr int kLinuxGuest[] = {SYS_openat2, SYS_close, SYS_lseek, SYS_getdents64, SYS_pwrite64, SYS_readlinkat};

} // namespace

std::vector<sock_filter> vcpu_seccomp_program(int vcpu_fd, bool linux_guest) {
    std::vector<sock_filter> p;
    // Native x86-64 only: another arch's (i386 int 0x80) or x32's numbers
    // mean other syscalls.
    p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, kArch));
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
    p.push_back(stmt(BPF_RET | BPF_K, kKill));
    p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, kNr));
    p.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, __X32_SYSCALL_BIT, 0, 1));
    p.push_back(stmt(BPF_RET | BPF_K, kKill));

    const auto linux_list = linux_guest ? std::span<const int>(kLinuxGuest) : std::span<const int>();
    for (auto list : {std::span<const int>(kPlain), std::span<const int>(kSanitizerOnly), linux_list})
        for (int nr : list) {
            p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1));
            p.push_back(stmt(BPF_RET | BPF_K, kAllow));
        }

    // ioctl: the vCPU fd only, and only what the run loop and its result use.
    // Each block below starts with "nr == X ? fall in : skip the block" and
    // ends in a return, so the accumulator (nr) is reloaded after it.
    const sock_filter ioctl_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(0)),
        jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(vcpu_fd), 0, 6),
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(1)),
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_RUN, 5, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_GET_REGS, 4, 0),
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_GET_SREGS, 3, 0),
        // CR3 loads the ring-3 guest asks for (CPU control device).
        jump(BPF_JMP | BPF_JEQ | BPF_K, KVM_SET_SREGS, 2, 0),
        // The return from a Linux-ABI guest's system call (never matches otherwise).
        jump(BPF_JMP | BPF_JEQ | BPF_K, linux_guest ? KVM_SET_REGS : KVM_RUN, 1, 0),
        stmt(BPF_RET | BPF_K, kKill),
        stmt(BPF_RET | BPF_K, kAllow),
    };
    // mmap, mprotect: never executable memory.
    const sock_filter no_exec_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(2)),
        jump(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        stmt(BPF_RET | BPF_K, kKill),
        stmt(BPF_RET | BPF_K, kAllow),
    };
    // newfstatat: only fstat(fd), which glibc issues as (fd, "", buf, AT_EMPTY_PATH).
    const sock_filter fstat_block[] = {
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(3)),
        jump(BPF_JMP | BPF_JEQ | BPF_K, AT_EMPTY_PATH, 1, 0),
        stmt(BPF_RET | BPF_K, kKill),
        stmt(BPF_RET | BPF_K, kAllow),
    };
    auto guarded = [&](int nr, const auto& block) {
        p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, kNr));
        p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, std::size(block)));
        p.insert(p.end(), std::begin(block), std::end(block));
    };
    guarded(SYS_ioctl, ioctl_block);
    guarded(SYS_mmap, no_exec_block);
    guarded(SYS_mprotect, no_exec_block);
    guarded(SYS_newfstatat, fstat_block);
    p.push_back(stmt(BPF_RET | BPF_K, kKill));
    return p;
}

void confine_vcpu_thread(int vcpu_fd, bool linux_guest) {
    std::vector<sock_filter> program = vcpu_seccomp_program(vcpu_fd, linux_guest);
    const sock_fprog prog{static_cast<unsigned short>(program.size()), program.data()};
    // Required for an unprivileged filter; per thread, like the filter.
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        throw std::system_error(errno, std::generic_category(), "vCPU seccomp: prctl(PR_SET_NO_NEW_PRIVS)");
    // flags 0: no SECCOMP_FILTER_FLAG_TSYNC, so only this thread is confined.
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
        throw std::system_error(errno, std::generic_category(),
                                "vCPU seccomp: seccomp(SECCOMP_SET_MODE_FILTER) (run with --no-seccomp to go without)");
}

} // namespace kvmgpu
