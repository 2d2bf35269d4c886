#include "kvmtool-gpu/devices/vgpu_worker/worker_syscalls.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

namespace kvmgpu::vgpu {

namespace {

using enum SyscallRule;

// SEEDED, NOT YET MEASURED on the H100: what the worker uses on the host
// backend here (the recorder, --gpu-worker always) plus what the CUDA driver
// is known to need after cuInit (ioctls on its device nodes, mappings,
// threads) and what dlopen needs for the libraries loaded at a guest's first
// cuBLAS/cuRAND/cuFFT call. Replace it with the recorder's "after" table
// (device-check.sh sandbox prints it in this form).
constexpr WorkerSyscall kTable[] = {
    // the ring, the channel, the kick eventfd, log lines
    {SYS_read, Allow}, {SYS_write, Allow}, {SYS_writev, Allow}, {SYS_pread64, Allow},
    {SYS_ppoll, Allow}, {SYS_poll, Allow}, {SYS_futex, Allow}, {SYS_sched_yield, Allow},
    {SYS_nanosleep, Allow}, {SYS_clock_nanosleep, Allow}, {SYS_clock_gettime, Allow}, {SYS_gettimeofday, Allow},
    {SYS_getppid, Allow}, // the worker's check that its VMM still lives
    // Measured on the H100 after the start (device-check.sh sandbox, 2026-11-26): the
    // driver's JIT cache makes its folders (writes then fail on the read-only
    // mounts, which it survives) and a library's thread asks its priority range.
    {SYS_mkdir, Allow}, {SYS_sched_get_priority_max, Allow}, {SYS_sched_get_priority_min, Allow},
    // memory: the allocator, guest-RAM aliases, the driver's mappings, dlopen
    {SYS_mmap, Allow}, {SYS_munmap, Allow}, {SYS_mprotect, Allow}, {SYS_mremap, Allow},
    {SYS_madvise, Allow}, {SYS_brk, Allow},
    // the driver: ioctls on its device nodes, its own descriptors
    {SYS_ioctl, NotTerminal}, {SYS_close, Allow}, {SYS_fstat, Allow}, {SYS_newfstatat, Allow},
    {SYS_lseek, Allow}, {SYS_fcntl, Allow}, {SYS_openat, ReadOnlyOpen}, {SYS_readlink, Allow},
    {SYS_getpid, Allow}, {SYS_gettid, Allow}, {SYS_sched_getaffinity, Allow}, {SYS_getrandom, Allow},
    // the driver's helper threads (they outlive cuInit): waiting on the
    // descriptors they hold, naming themselves, looking the system up
    {SYS_epoll_wait, Allow}, {SYS_epoll_pwait, Allow}, {SYS_epoll_ctl, Allow}, {SYS_pselect6, Allow},
    {SYS_eventfd2, Allow}, {SYS_pipe2, Allow}, {SYS_prctl, Allow}, {SYS_uname, Allow}, {SYS_sysinfo, Allow},
    {SYS_getdents64, Allow}, {SYS_access, Allow}, {SYS_faccessat, Allow}, {SYS_faccessat2, Allow},
    {SYS_statfs, Allow}, {SYS_fstatfs, Allow}, {SYS_getrusage, Allow},
    // threads (the driver's, glibc's start and end of one) and signals
    {SYS_clone, ThreadsOnly}, {SYS_clone3, Enosys}, {SYS_set_robust_list, Allow}, {SYS_rseq, Allow},
    {SYS_rt_sigprocmask, Allow}, {SYS_rt_sigaction, Allow}, {SYS_rt_sigreturn, Allow},
    {SYS_sigaltstack, Allow}, {SYS_restart_syscall, Allow}, {SYS_tgkill, OwnProcess}, {SYS_kill, OwnProcess},
    {SYS_exit, Allow}, {SYS_exit_group, Allow},
};

} // namespace

std::span<const WorkerSyscall> worker_syscalls() { return kTable; }

Verdict worker_verdict(int nr, const uint64_t (&args)[6], pid_t self, bool writable_opens_confined) {
    // The low 32 bits, as the filter reads them (seccomp_bpf.h).
    const auto lo = [&](int i) { return static_cast<uint32_t>(args[i]); };
    for (const WorkerSyscall& s : kTable) {
        if (s.nr != nr) continue;
        switch (s.rule) {
        case Allow: return Verdict::Allowed;
        case ThreadsOnly: return lo(0) & CLONE_THREAD ? Verdict::Allowed : Verdict::Killed;
        case OwnProcess: return lo(0) == static_cast<uint32_t>(self) ? Verdict::Allowed : Verdict::Killed;
        case NotTerminal: return lo(1) == TIOCSTI || lo(1) == TIOCLINUX ? Verdict::Killed : Verdict::Allowed;
        case ReadOnlyOpen:
            return !writable_opens_confined && lo(2) & (O_ACCMODE | O_CREAT | O_TRUNC) ? Verdict::Refused
                                                                                       : Verdict::Allowed;
        case Enosys: return Verdict::Refused;
        }
    }
    return Verdict::Killed;
}

const char* to_string(Verdict v) {
    switch (v) {
    case Verdict::Allowed: return "allowed";
    case Verdict::Refused: return "refused";
    case Verdict::Killed: return "DENIED";
    }
    return "?";
}

} // namespace kvmgpu::vgpu
