#include "kvmtool-gpu/devices/vgpu_worker/worker_sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "kvmtool-gpu/devices/vgpu_worker/worker_syscalls.h"
#include "kvmtool-gpu/util/seccomp_bpf.h"

namespace kvmgpu::vgpu {

namespace {

using namespace seccomp;

bool own_mounts = false;

// The block for a rule that looks at an argument (seccomp::Program::guarded).
std::vector<sock_filter> block_for(SyscallRule rule, pid_t self) {
    switch (rule) {
    case SyscallRule::ThreadsOnly:
        return {stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(0)), jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
                ret(kKill), ret(kAllow)};
    case SyscallRule::OwnProcess:
        return {stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(0)),
                jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(self), 1, 0), ret(kKill), ret(kAllow)};
    case SyscallRule::NotTerminal:
        return {stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(1)), jump(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 1, 0),
                jump(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 0, 1), ret(kKill), ret(kAllow)};
    case SyscallRule::ReadOnlyOpen:
        return {stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(2)),
                jump(BPF_JMP | BPF_JSET | BPF_K, O_ACCMODE | O_CREAT | O_TRUNC, 0, 1), ret(errno_action(EROFS)),
                ret(kAllow)};
    case SyscallRule::Allow:
    case SyscallRule::Enosys: break; // no argument to look at
    }
    return {ret(kKill)};
}

void check(bool ok, const char* call) {
    if (!ok) throw std::system_error(errno, std::generic_category(), std::string("GPU worker sandbox: ") + call);
}

// In the worker's own mount namespace: every mount read-only, then /dev
// writable again (the driver's nodes, /dev/shm). Device nodes open for
// writing on a read-only mount anyway; files do not.
void read_only_tree() {
    mount_attr ro{};
    ro.attr_set = MOUNT_ATTR_RDONLY;
    check(syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro) == 0,
          "mount_setattr(/, read-only)");
    mount_attr rw{};
    rw.attr_clr = MOUNT_ATTR_RDONLY;
    if (syscall(SYS_mount_setattr, AT_FDCWD, "/dev", AT_RECURSIVE, &rw, sizeof rw) != 0 && errno != ENOENT)
        check(false, "mount_setattr(/dev, writable)");
}

} // namespace

std::string enter_worker_namespaces() {
    if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0)
        return std::string("no namespaces of its own (unshare: ") + std::strerror(errno) + ")";
    // Nothing mounted here reaches the VMM's namespace, or the reverse.
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return std::string("network namespace; mount namespace not private (") + std::strerror(errno) + ")";
    own_mounts = true;
    return "network and mount namespaces";
}

std::vector<sock_filter> worker_seccomp_program(pid_t self) {
    Program p;
    p.allow(sanitizer_runtime_calls());
    for (const WorkerSyscall& s : worker_syscalls()) {
        if (s.rule == SyscallRule::Allow) p.on(s.nr, kAllow);
        else if (s.rule == SyscallRule::Enosys) p.on(s.nr, errno_action(ENOSYS));
        else p.guarded(s.nr, block_for(s.rule, self));
    }
    return p.finish(kKill);
}

std::string confine_worker() {
    std::string done;
    // Only in a mount namespace of its own: in the VMM's it would make the host's mounts read-only.
    if (own_mounts) read_only_tree(), done = "read-only mounts but /dev, ";
    const auto program = worker_seccomp_program(getpid());
    const int r = install(program, SECCOMP_FILTER_FLAG_TSYNC, "GPU worker sandbox",
                          " (run with --worker-sandbox off to go without)");
    if (r != 0) // TSYNC: the id of a thread that could not take the filter
        throw std::runtime_error("GPU worker sandbox: thread " + std::to_string(r) + " could not take the seccomp filter");
    return done + "seccomp (" + std::to_string(worker_syscalls().size()) + " calls, " +
           std::to_string(program.size()) + " BPF instructions) on every thread";
}

} // namespace kvmgpu::vgpu
