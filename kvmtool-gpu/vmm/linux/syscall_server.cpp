#include "kvmtool-gpu/vmm/linux/syscall_server.h"

#include <sys/syscall.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/util/log.h"
#include "kvmtool-gpu/vmm/linux/syscall_trace.h"

namespace kvmgpu::linux_abi {

std::string syscall_name(uint64_t nr) {
    if (nr == KVMGPU_LINUX_SYS_ALIAS) return "kvmgpu_alias";
    return kvmgpu::syscall_name(nr); // util/syscall_names.h: the build host's names
}

SyscallServer::SyscallServer(const memmap::GuestMemory& mem, ProcessLayout layout, ServerOptions opts)
    : aliases_(mem, layout.alias_tables_lo, layout.alias_tables_hi),
      window_(opts.window_slots ? FileWindow::create(KVMGPU_LINUX_FILE_WINDOW_GPA, KVMGPU_LINUX_FILE_WINDOW_SIZE,
                                                     opts.window_slots, opts.window_limits)
                                : nullptr),
      user_(mem, layout.unmapped, &aliases_, window_.get()),
      layout_(std::move(layout)), opts_(std::move(opts)), space_(mem, layout_.managed_lo, layout_.managed_hi, layout_.brk_start), fds_(opts_.max_fds), rng_(opts_.seed.value_or(0)) {
    if (opts_.stdio) lend_host_stdio();
    if (GuestFs::normalize(opts_.cwd) == "/") return;
    const int err = !opts_.cwd.starts_with('/') ? -EINVAL
                    : opts_.share             ? cwd_.change(*opts_.share, opts_.cwd)
                                              : -ENOENT;
    if (err) throw std::invalid_argument("--cwd " + opts_.cwd + ": not a directory in the guest's mounts (" +
                                         std::strerror(-err) + ")");
}

SyscallOutcome SyscallServer::serve(const SyscallCall& call, CpuState& cpu) {
    const auto t0 = std::chrono::steady_clock::now();
    SyscallOutcome out;
    if (blocking(call.nr)) {
        out.ret = dispatch_blocking(call, out);
    } else {
        for (;;) {
            std::string console;
            int stdio = -1;
            std::shared_ptr<OpenFile> wait_on;
            short events = 0;
            {
                std::lock_guard lock(mu_);
                out.ret = dispatch(call, cpu, out);
                console.swap(console_pending_);
                stdio = std::exchange(console_stdio_, -1);
                if (out.ret == -EAGAIN) wait_on = stream_to_wait_on(call, events);
            }
            // Other threads' calls go on while the console writes (it has a lock of its own).
            if (!console.empty() && stdio > 0 && opts_.stdio) {
                // The call's count is what reached the VMM's stream.
                const int64_t wrote = opts_.stdio->write(stdio, console);
                if (wrote < static_cast<int64_t>(console.size())) out.ret = wrote;
            } else if (!console.empty() && opts_.console_text) {
                opts_.console_text(console);
            }
            if (!wait_on) break;
            // A blocking pipe or eventfd not ready: wait without the lock, then try again.
            if (const int64_t waited = stream_wait(*wait_on, events); waited < 0) {
                out.ret = waited;
                break;
            }
        }
    }
    if (opts_.trace) opts_.trace->record(call, out.ret, user_);
    std::lock_guard lock(counters_mu_);
    ++counters_.calls[std::min<uint64_t>(call.nr, counters_.calls.size() - 1)];
    ++counters_.total;
    if (out.ret == -ENOSYS) ++counters_.not_served;
    counters_.ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

bool SyscallServer::blocking(uint64_t nr) {
    return nr == SYS_futex || nr == SYS_nanosleep || nr == SYS_clock_nanosleep || nr == SYS_sched_yield ||
           nr == SYS_pause || nr == SYS_poll || nr == SYS_ppoll || nr == SYS_select || nr == SYS_pselect6 ||
           nr == SYS_epoll_wait || nr == SYS_epoll_pwait;
}

int64_t SyscallServer::dispatch_blocking(const SyscallCall& c, SyscallOutcome& out) {
    const uint64_t* a = c.arg;
    // A futex's or poll's arguments are checked first, then it returns EINTR (poll after one look).
    const bool checks_first = c.nr == SYS_futex || c.nr == SYS_poll || c.nr == SYS_ppoll || c.nr == SYS_select ||
                              c.nr == SYS_pselect6 || c.nr == SYS_epoll_wait || c.nr == SYS_epoll_pwait;
    if (stopping() && !checks_first) return -EINTR;
    switch (c.nr) {
    case SYS_futex: return sys_futex(a, out);
    case SYS_nanosleep: return sys_nanosleep(1 /* CLOCK_MONOTONIC */, 0, a[0], a[1]);
    case SYS_clock_nanosleep: return sys_nanosleep(a[0], a[1], a[2], a[3]);
    case SYS_sched_yield: std::this_thread::yield(); return 0;
    case SYS_poll: return sys_poll(a[0], a[1], poll_deadline(static_cast<int32_t>(a[2])));
    case SYS_ppoll: {
        std::optional<FutexDeadline> deadline;
        if (const int64_t rc = ppoll_deadline(a[2], a[3], a[4], deadline); rc < 0) return rc;
        return sys_poll(a[0], a[1], deadline);
    }
    case SYS_select: return sys_select(a, false);
    case SYS_pselect6: return sys_select(a, true);
    case SYS_epoll_wait:
        return sys_epoll_wait(a[0], a[1], static_cast<int32_t>(a[2]), poll_deadline(static_cast<int32_t>(a[3])));
    case SYS_epoll_pwait: {
        std::optional<FutexDeadline> unused;
        if (a[4]) // the signal mask: checked, not applied (syscalls_events.cpp)
            if (const int64_t rc = ppoll_deadline(0, a[4], a[5], unused); rc < 0) return rc;
        return sys_epoll_wait(a[0], a[1], static_cast<int32_t>(a[2]), poll_deadline(static_cast<int32_t>(a[3])));
    }
    case SYS_pause: { // no guest signal is ever delivered: it returns at the VMM's kick (the VM ending)
        const timespec slice{0, 50'000'000};
        while (!stopping())
            if (::clock_nanosleep(CLOCK_MONOTONIC, 0, &slice, nullptr) == EINTR) break;
        return -EINTR;
    }
    default: return -ENOSYS;
    }
}

int64_t SyscallServer::dispatch(const SyscallCall& c, CpuState& cpu, SyscallOutcome& out) {
    const uint64_t* a = c.arg;
    const auto dirfd = static_cast<int64_t>(static_cast<int32_t>(a[0])); // *at calls take an int
    switch (c.nr) {
    // memory
    case SYS_brk: return sys_brk(a[0]);
    case SYS_mmap: return sys_mmap(a);
    case SYS_munmap: return sys_munmap(a[0], a[1]);
    case SYS_mprotect: return sys_mprotect(a[0], a[1], a[2]);
    case SYS_mremap: return sys_mremap(a);
    case SYS_madvise: return sys_madvise(a[0], a[1], a[2]);
    case KVMGPU_LINUX_SYS_ALIAS: return sys_alias(a[0], a[1], a[2]);
    // files
    case SYS_read: return sys_read(a[0], a[1], a[2], -1);
    case SYS_write: return sys_write(a[0], a[1], a[2], -1);
    case SYS_pread64: return static_cast<int64_t>(a[3]) < 0 ? -EINVAL : sys_read(a[0], a[1], a[2], a[3]);
    case SYS_pwrite64: return static_cast<int64_t>(a[3]) < 0 ? -EINVAL : sys_write(a[0], a[1], a[2], a[3]);
    case SYS_readv: return sys_iov(a[0], a[1], a[2], false);
    case SYS_writev: return sys_iov(a[0], a[1], a[2], true);
    case SYS_sendfile: return sys_sendfile(a[0], a[1], a[2], a[3]);
    case SYS_open: return sys_openat(-100 /* AT_FDCWD */, a[0], a[1], a[2]);
    case SYS_openat: return sys_openat(dirfd, a[1], a[2], a[3]);
    case SYS_close: return sys_close(a[0]);
    case SYS_fstat: return sys_fstat(a[0], a[1]);
    case SYS_stat: return sys_newfstatat(-100, a[0], a[1], 0);
    case SYS_lstat: return sys_newfstatat(-100, a[0], a[1], 0x100 /* AT_SYMLINK_NOFOLLOW */);
    case SYS_newfstatat: return sys_newfstatat(dirfd, a[1], a[2], a[3]);
    case SYS_statx: return sys_statx(dirfd, a[1], a[2], a[4]);
    case SYS_lseek: return sys_lseek(a[0], static_cast<int64_t>(a[1]), a[2]);
    case SYS_ioctl: return sys_ioctl(a[0], a[1], a[2]);
    case SYS_readlink: return sys_readlinkat(-100, a[0], a[1], a[2]);
    case SYS_readlinkat: return sys_readlinkat(dirfd, a[1], a[2], a[3]);
    case SYS_access: return sys_faccessat(-100, a[0], a[1]);
    case SYS_faccessat:
    case SYS_faccessat2: return sys_faccessat(dirfd, a[1], a[2]);
    case SYS_mkdir: return sys_mkdirat(-100 /* AT_FDCWD */, a[0], a[1]);
    case SYS_mkdirat: return sys_mkdirat(dirfd, a[1], a[2]);
    case SYS_unlink: return sys_unlinkat(-100, a[0], 0);
    case SYS_rmdir: return sys_unlinkat(-100, a[0], 0x200 /* AT_REMOVEDIR */);
    case SYS_unlinkat: return sys_unlinkat(dirfd, a[1], a[2]);
    case SYS_rename: return sys_renameat2(-100, a[0], -100, a[1], 0);
    case SYS_renameat: return sys_renameat2(dirfd, a[1], static_cast<int32_t>(a[2]), a[3], 0);
    case SYS_renameat2: return sys_renameat2(dirfd, a[1], static_cast<int32_t>(a[2]), a[3], a[4]);
    case SYS_link: return sys_linkat(-100, a[0], -100, a[1], 0);
    case SYS_linkat: return sys_linkat(dirfd, a[1], static_cast<int32_t>(a[2]), a[3], a[4]);
    case SYS_symlink: return sys_symlinkat(a[0], -100, a[1]);
    case SYS_symlinkat: return sys_symlinkat(a[0], static_cast<int32_t>(a[1]), a[2]);
    case SYS_getdents64: return sys_getdents64(a[0], a[1], a[2]);
    case SYS_getcwd: return sys_getcwd(a[0], a[1]);
    case SYS_chdir: return sys_chdir(a[0]);
    case SYS_fchdir: return sys_fchdir(a[0]);
    case SYS_fcntl: return sys_fcntl(a[0], a[1], a[2]);
    case SYS_dup: return sys_dup(a[0], -1, 0, false);
    case SYS_dup2: return static_cast<int32_t>(a[1]) < 0 ? -EBADF : sys_dup(a[0], static_cast<int32_t>(a[1]), 0, false);
    case SYS_dup3: return static_cast<int32_t>(a[1]) < 0 ? -EBADF : sys_dup(a[0], static_cast<int32_t>(a[1]), a[2], true);
    case SYS_pipe: return sys_pipe2(a[0], 0);
    case SYS_pipe2: return sys_pipe2(a[0], a[1]);
    case SYS_eventfd: return sys_eventfd2(a[0], 0);
    case SYS_eventfd2: return sys_eventfd2(a[0], a[1]);
    case SYS_epoll_create: return static_cast<int32_t>(a[0]) <= 0 ? -EINVAL : sys_epoll_create1(0);
    case SYS_epoll_create1: return sys_epoll_create1(a[0]);
    case SYS_epoll_ctl: return sys_epoll_ctl(a[0], a[1], static_cast<int32_t>(a[2]), a[3]);
    case SYS_fsync:
    case SYS_fdatasync: return fds_.get(a[0]) ? 0 : -EBADF;
    // process
    case SYS_exit:
    case SYS_exit_group:
        (c.nr == SYS_exit ? out.thread_exited : out.exited) = true;
        out.exit_code = static_cast<int>(a[0] & 0xff);
        return 0;
    case SYS_clone: return sys_clone(c.tid, a, cpu, out);
    case SYS_clone3: return -ENOSYS; // glibc falls back to clone
    case SYS_set_tid_address: return sys_set_tid_address(c.tid, a[0]);
    case SYS_arch_prctl: return sys_arch_prctl(a[0], a[1], cpu);
    case SYS_set_robust_list: return a[1] == 24 ? 0 : -EINVAL;
    case SYS_rseq: return -ENOSYS; // glibc goes on without it
    case SYS_prlimit64: return sys_prlimit(a[0], a[1], a[2], a[3]);
    case SYS_getrlimit: return sys_prlimit(0, a[0], 0, a[1]);
    case SYS_uname: return sys_uname(a[0]);
    case SYS_getpid: return 1;
    case SYS_process_vm_readv: return sys_process_vm(a[0], a[1], a[2], a[3], a[4], a[5], false);
    case SYS_process_vm_writev: return sys_process_vm(a[0], a[1], a[2], a[3], a[4], a[5], true);
    case SYS_gettid: return c.tid;
    case SYS_getppid: return 0;
    case SYS_getuid:
    case SYS_geteuid:
    case SYS_getgid:
    case SYS_getegid: return 0;
    case SYS_sched_getaffinity: return sys_sched_getaffinity(a[0], a[1], a[2]);
    case SYS_sched_setaffinity: return sys_sched_setaffinity(a[0], a[1], a[2]);
    case SYS_sched_get_priority_max: return sched_priority_bound(a[0], true);
    case SYS_sched_get_priority_min: return sched_priority_bound(a[0], false);
    case SYS_sysinfo: return sys_sysinfo(a[0]);
    case SYS_prctl: return sys_prctl(c.tid, a[0], a[1]);
    case SYS_sigaltstack: return sys_sigaltstack(c.tid, a[0], a[1]);
    case SYS_rt_sigaction: return sys_rt_sigaction(a[0], a[1], a[2], a[3]);
    case SYS_rt_sigprocmask: return sys_rt_sigprocmask(c.tid, a[0], a[1], a[2], a[3]);
    case SYS_kill: return sys_kill(a[0], a[1]);
    case SYS_tgkill: return sys_tgkill(static_cast<int32_t>(a[0]), static_cast<int32_t>(a[1]), a[2]);
    case SYS_tkill: return sys_tgkill(-1, static_cast<int32_t>(a[0]), a[1]);
    case SYS_getrandom: return sys_getrandom(a[0], a[1], a[2]);
    // time
    case SYS_clock_gettime: return sys_clock_gettime(a[0], a[1]);
    case SYS_clock_getres: return sys_clock_getres(a[0], a[1]);
    case SYS_gettimeofday: return sys_gettimeofday(a[0]);
    case SYS_time: return sys_time(a[0]);
    default: break;
    }
    if (c.nr < warned_.size() ? !warned_[c.nr] : !warned_.back()) {
        warned_[std::min<uint64_t>(c.nr, warned_.size() - 1)] = true;
        log_warn("linux guest: system call %s (%llu) not served: ENOSYS", syscall_name(c.nr).c_str(),
                 static_cast<unsigned long long>(c.nr));
    }
    return -ENOSYS;
}

std::string SyscallServer::report() const {
    std::vector<std::pair<uint64_t, uint64_t>> by_count; // count, nr
    for (uint64_t nr = 0; nr < counters_.calls.size(); ++nr)
        if (counters_.calls[nr]) by_count.emplace_back(counters_.calls[nr], nr);
    std::sort(by_count.rbegin(), by_count.rend());
    std::string list;
    for (const auto& [n, nr] : by_count) {
        if (!list.empty()) list += ", ";
        list += (nr == counters_.calls.size() - 1 ? std::string("other") : syscall_name(nr)) + " " + std::to_string(n);
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, "%llu system calls, %.3f ms serving them in the VMM (%.2f us each), %llu not served",
                  static_cast<unsigned long long>(counters_.total), counters_.ns * 1e-6,
                  counters_.total ? counters_.ns * 1e-3 / counters_.total : 0.0,
                  static_cast<unsigned long long>(counters_.not_served));
    std::string line = std::string(buf) + (list.empty() ? "" : " (" + list + ")");
    if (window_) line += "; file window: " + window_->describe();
    return line;
}

} // namespace kvmgpu::linux_abi
