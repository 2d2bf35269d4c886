// The process as glibc's start-up, malloc and exit see it: pid 1, root,
// one CPU reported; signal handlers recorded and never delivered. Threads
// and futexes: syscalls_threads.cpp.
#include <sched.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr uint64_t kArchSetGs = 0x1001, kArchSetFs = 0x1002, kArchGetFs = 0x1003, kArchGetGs = 0x1004;
constexpr uint64_t kUserTop = 1ull << 47; // canonical lower half: what Linux lets FS/GS point to

// splitmix64: a small generator seeded from --seed, so runs repeat (not
// cryptographic: without --seed the host's getrandom serves instead).
uint64_t next_random(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
} // namespace

int64_t SyscallServer::sys_arch_prctl(uint64_t code, uint64_t addr, CpuState& cpu) {
    switch (code) {
    case kArchSetFs:
    case kArchSetGs:
        if (addr >= kUserTop) return -EPERM;
        (code == kArchSetFs ? cpu.fs_base : cpu.gs_base) = addr;
        return 0;
    case kArchGetFs: return user_.write_obj(addr, cpu.fs_base) ? 0 : -EFAULT;
    case kArchGetGs: return user_.write_obj(addr, cpu.gs_base) ? 0 : -EFAULT;
    default: return -EINVAL; // CET, CPUID faulting, ...
    }
}

int64_t SyscallServer::sys_uname(uint64_t buf) {
    struct utsname u {};
    std::strncpy(u.sysname, "Linux", sizeof u.sysname - 1);
    std::strncpy(u.nodename, "kvmtool-gpu", sizeof u.nodename - 1);
    std::strncpy(u.release, opts_.kernel_release.c_str(), sizeof u.release - 1);
    std::strncpy(u.version, "#1 kvmtool-gpu Linux-ABI guest", sizeof u.version - 1);
    std::strncpy(u.machine, "x86_64", sizeof u.machine - 1);
    return user_.write_obj(buf, u) ? 0 : -EFAULT;
}

int64_t SyscallServer::sys_prlimit(uint64_t pid, uint64_t resource, uint64_t new_limit, uint64_t old_limit) {
    if (pid != 0 && pid != 1) return -ESRCH;
    if (resource >= RLIM_NLIMITS) return -EINVAL;
    if (new_limit) return -EPERM; // limits are the VMM's
    if (!old_limit) return 0;
    struct rlimit r {RLIM_INFINITY, RLIM_INFINITY};
    const uint64_t ram = user_.memory().total_bytes();
    switch (resource) {
    case RLIMIT_STACK: r.rlim_cur = r.rlim_max = layout_.stack_top - layout_.stack_lo; break;
    case RLIMIT_NOFILE: r.rlim_cur = r.rlim_max = static_cast<rlim_t>(fds_.limit()); break;
    case RLIMIT_AS:
    case RLIMIT_DATA: r.rlim_cur = r.rlim_max = ram; break;
    case RLIMIT_NPROC: r.rlim_cur = r.rlim_max = 1; break;
    case RLIMIT_CORE: r.rlim_cur = r.rlim_max = 0; break;
    default: break;
    }
    return user_.write_obj(old_limit, r) ? 0 : -EFAULT;
}

int64_t SyscallServer::sys_rt_sigaction(uint64_t sig, uint64_t act, uint64_t oldact, uint64_t size) {
    constexpr uint64_t kActionBytes = 32; // handler, flags, restorer, mask
    if (size != 8 || sig < 1 || sig > 64) return -EINVAL;
    if (act && (sig == 9 || sig == 19)) return -EINVAL; // SIGKILL, SIGSTOP
    uint8_t* slot = &sigactions_[(sig - 1) * kActionBytes];
    uint8_t incoming[kActionBytes];
    if (act && !user_.read(act, incoming, kActionBytes)) return -EFAULT;
    if (oldact && !user_.write(oldact, slot, kActionBytes)) return -EFAULT;
    if (act) std::memcpy(slot, incoming, kActionBytes); // used by syscalls_signals.cpp
    return 0;
}

int64_t SyscallServer::sys_rt_sigprocmask(uint32_t tid, uint64_t how, uint64_t set, uint64_t oldset, uint64_t size) {
    if (size != 8) return -EINVAL;
    uint64_t incoming = 0;
    if (set) {
        if (how > 2) return -EINVAL; // SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK
        if (!user_.read(set, &incoming, 8)) return -EFAULT;
    }
    uint64_t& mask = thread_state(tid).sigmask; // the calling thread's own
    if (oldset && !user_.write(oldset, &mask, 8)) return -EFAULT;
    if (set) {
        constexpr uint64_t kUnblockable = (1ull << 8) | (1ull << 18); // SIGKILL, SIGSTOP
        if (how == 0) mask |= incoming;
        else if (how == 1) mask &= ~incoming;
        else mask = incoming;
        mask &= ~kUnblockable;
    }
    return 0;
}

int64_t SyscallServer::sched_priority_bound(uint64_t policy, bool max) {
    switch (static_cast<int32_t>(policy)) {
    case SCHED_OTHER: case SCHED_BATCH: case SCHED_IDLE: case 6 /* SCHED_DEADLINE */: return 0;
    case SCHED_FIFO: case SCHED_RR: return max ? 99 : 1;
    default: return -EINVAL;
    }
}

int64_t SyscallServer::sys_sched_getaffinity(uint64_t pid, uint64_t len, uint64_t mask) {
    if (pid != 0 && pid != 1) return -ESRCH;
    if (len < 8 || len % 8) return -EINVAL;
    if (!user_.span(mask, len)) return -EFAULT; // the whole buffer the caller gave, not just the 8 bytes written
    const uint64_t one_cpu = 1;
    return user_.write_obj(mask, one_cpu) ? 8 : -EFAULT;
}

int64_t SyscallServer::sys_sched_setaffinity(uint64_t pid, uint64_t len, uint64_t mask) {
    if (pid != 0 && pid != 1) return -ESRCH;
    if (len == 0) return -EINVAL;
    // Linux reads at most its cpumask's bytes (NR_CPUS 8192 bits at most);
    // every byte it reads must be there. CPU 0 must be in the set: the only one.
    const uint64_t n = std::min<uint64_t>(len, 1024);
    uint8_t first = 0;
    if (!user_.span(mask, n) || !user_.read(mask, &first, 1)) return -EFAULT;
    return (first & 1) ? 0 : -EINVAL;
}

int64_t SyscallServer::sys_sysinfo(uint64_t buf) {
    struct sysinfo info {};
    info.uptime = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_).count();
    info.totalram = user_.memory().total_bytes();
    info.freeram = space_.free_bytes();
    info.procs = 1;
    info.mem_unit = 1;
    return user_.write_obj(buf, info) ? 0 : -EFAULT;
}

int64_t SyscallServer::sys_getrandom(uint64_t buf, uint64_t len, uint64_t flags) {
    if (flags & ~uint64_t{7}) return -EINVAL; // GRND_NONBLOCK, GRND_RANDOM, GRND_INSECURE
    len = std::min<uint64_t>(len, 33554431); // Linux's per-call cap
    auto dst = user_.span(buf, len);
    if (!dst) return -EFAULT;
    if (!opts_.seed) { // a short count past 256 bytes, as Linux may give
        const ssize_t n = ::getrandom(dst->data(), len, 0);
        return n < 0 ? -errno : n;
    }
    for (uint64_t i = 0; i < len; i += 8) {
        const uint64_t r = next_random(rng_);
        std::memcpy(dst->data() + i, &r, std::min<uint64_t>(8, len - i));
    }
    return static_cast<int64_t>(len);
}

} // namespace kvmgpu::linux_abi
