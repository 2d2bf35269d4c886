#include "kvmtool-gpu/devices/vgpu_worker/worker_sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "kvmtool-gpu/devices/vgpu_worker/worker_private_dev.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_syscalls.h"
#include "kvmtool-gpu/util/seccomp_bpf.h"
#include "kvmtool-gpu/util/seccomp_report.h"

namespace kvmgpu::vgpu {

namespace {

using namespace seccomp;

bool own_mounts = false;
bool own_dev = false; // make_private_dev's /dev
// Every mount but /dev's read-only and without device nodes, over a /dev of
// the worker's own: an open for writing reaches only the GPU's nodes and
// the worker's own tmpfs, so openat may have it (the driver's late opens).
std::atomic<bool> writable_opens_confined{false}; // read by the syscall recorder's thread

// Keeps only the capabilities in `keep` (a mask of CAP_* bits) in this
// thread's effective, permitted and inheritable sets, and no ambient ones.
// Threads made afterwards inherit the result. Without CAP_SYS_PTRACE, and
// with the VMM not dumpable (cli/main.cpp), a worker cannot open the VMM's
// /proc/PID/mem, which holds every VM of its process.
void keep_capabilities(uint64_t keep) {
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); // EINVAL on old kernels: none to clear
    __user_cap_header_struct head{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capget, &head, data) != 0)
        throw std::system_error(errno, std::generic_category(), "GPU worker sandbox: capget");
    for (int i = 0; i < 2; ++i) {
        const auto mask = static_cast<uint32_t>(keep >> (32 * i));
        data[i].effective &= mask, data[i].permitted &= mask, data[i].inheritable &= mask;
    }
    if (syscall(SYS_capset, &head, data) != 0)
        throw std::system_error(errno, std::generic_category(), "GPU worker sandbox: capset");
}

// The block for a rule that looks at an argument (seccomp::Program::guarded).
// What a rule refuses traps to the report (util/seccomp_report.h): the
// worker names the call on stderr, which is the VMM's, and ends with SIGSYS.
std::vector<sock_filter> block_for(SyscallRule rule, pid_t self) {
    switch (rule) {
    case SyscallRule::ThreadsOnly:
        return {stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(0)), jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
                ret(kRefuseAndReport), ret(kAllow)};
    case SyscallRule::OwnProcess:
        return {stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(0)),
                jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(self), 1, 0), ret(kRefuseAndReport), ret(kAllow)};
    case SyscallRule::NotTerminal:
        return {stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(1)), jump(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 1, 0),
                jump(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 0, 1), ret(kRefuseAndReport), ret(kAllow)};
    case SyscallRule::ReadOnlyOpen:
        return {stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(2)),
                jump(BPF_JMP | BPF_JSET | BPF_K, O_ACCMODE | O_CREAT | O_TRUNC, 0, 1), ret(errno_action(EROFS)),
                ret(kAllow)};
    case SyscallRule::Allow:
    case SyscallRule::Enosys: break; // no argument to look at
    }
    return {ret(kRefuseAndReport)};
}

// Mount points from /proc/self/mountinfo (the fifth field, with the
// kernel's octal escapes for space, tab, newline and backslash undone).
std::vector<std::string> mount_points() {
    std::vector<std::string> out;
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string id, parent, dev, root, point;
        if (!(f >> id >> parent >> dev >> root >> point)) continue;
        std::string plain;
        for (size_t i = 0; i < point.size(); ++i) {
            if (point[i] == '\\' && i + 3 < point.size()) {
                plain += static_cast<char>(std::stoi(point.substr(i + 1, 3), nullptr, 8));
                i += 3;
            } else {
                plain += point[i];
            }
        }
        out.push_back(plain);
    }
    return out;
}

// In the worker's own mount namespace: each mount read-only and without
// device nodes but /dev and those below it (the driver's nodes, /dev/shm;
// device nodes open for writing on a read-only mount anyway, files do not).
// One at a time, not AT_RECURSIVE: the kernel refuses a mount that has a
// file open for writing (EBUSY), and that one stays writable rather than
// failing every other. Says how many it made read-only and which it could
// not; *all: every one.
std::string read_only_mounts(bool* all) {
    mount_attr ro{};
    ro.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV;
    int done = 0;
    std::string kept;
    std::set<std::string> seen; // a point mounted over twice: its top mount is the one paths reach
    for (const std::string& m : mount_points()) {
        if (m == "/dev" || m.starts_with("/dev/") || !seen.insert(m).second) continue;
        if (syscall(SYS_mount_setattr, AT_FDCWD, m.c_str(), AT_SYMLINK_NOFOLLOW, &ro, sizeof ro) == 0) ++done;
        else kept += (kept.empty() ? "" : ", ") + m + " (" + std::strerror(errno) + ")";
    }
    *all = kept.empty();
    return std::to_string(done) + " mounts read-only, /dev not" + (kept.empty() ? "" : "; writable still: " + kept);
}

} // namespace

std::string enter_worker_namespaces(bool host_shm) {
    // While this is the worker's only thread: every thread the driver
    // starts later has no CAP_SYS_PTRACE (nor anything but what step 2's
    // read-only mounts need).
    keep_capabilities(uint64_t{1} << CAP_SYS_ADMIN);
    if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0)
        return std::string("no namespaces of its own (unshare: ") + std::strerror(errno) + ")";
    // Nothing mounted here reaches the VMM's namespace, or the reverse.
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return std::string("network namespace; mount namespace not private (") + std::strerror(errno) + ")";
    own_mounts = true;
    std::string why;
    own_dev = make_private_dev(host_shm, &why);
    return own_dev ? std::string("network and mount namespaces, a /dev of its own") + (host_shm ? " (the host's /dev/shm)" : "")
                   : "network and mount namespaces, the host's /dev (" + why + ")";
}

bool worker_writable_opens_confined() { return writable_opens_confined.load(); }

std::vector<sock_filter> worker_seccomp_program(pid_t self) {
    Program p;
    p.allow(sanitizer_runtime_calls());
    for (const WorkerSyscall& s : worker_syscalls()) {
        if (s.rule == SyscallRule::Allow || (s.rule == SyscallRule::ReadOnlyOpen && writable_opens_confined))
            p.on(s.nr, kAllow);
        else if (s.rule == SyscallRule::Enosys) p.on(s.nr, errno_action(ENOSYS));
        else p.guarded(s.nr, block_for(s.rule, self));
    }
    return p.finish(kRefuseAndReport);
}

std::string confine_worker() {
    std::string done;
    // Only in a mount namespace of its own: in the VMM's it would make the host's mounts read-only.
    if (own_mounts) {
        bool all = false;
        done = read_only_mounts(&all) + ", ";
        writable_opens_confined = own_dev && all;
        if (writable_opens_confined.load()) done += "opens for writing allowed (nothing else is writable), ";
    }
    keep_capabilities(0);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); // nor may another process read this one's memory
    const auto program = worker_seccomp_program(getpid());
    report_refused_calls({"vgpu-worker", "the GPU worker's seccomp filter",
                          "ending the worker, which the VMM replaces (worker_syscalls.cpp's table refuses "
                          "it; --worker-sandbox off goes without)"});
    const int r = install(program, SECCOMP_FILTER_FLAG_TSYNC, "GPU worker sandbox",
                          " (run with --worker-sandbox off to go without)");
    if (r != 0) // TSYNC: the id of a thread that could not take the filter
        throw std::runtime_error("GPU worker sandbox: thread " + std::to_string(r) + " could not take the seccomp filter");
    return done + "no capabilities, seccomp (" + std::to_string(worker_syscalls().size()) + " calls, " +
           std::to_string(program.size()) + " BPF instructions) on every thread";
}

} // namespace kvmgpu::vgpu
