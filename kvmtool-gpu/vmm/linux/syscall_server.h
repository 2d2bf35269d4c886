// Serves a Linux-ABI guest's system calls. The run loop hands it the call
// number and six arguments as the vCPU left them (RAX; RDI RSI RDX R10 R8
// R9) and the CPU state it may change (FS/GS base); it answers with the
// value for RAX (a result or -errno) or says that the guest exited. Every
// argument is guest-controlled: pointers go through UserMemory, lengths are
// bounded, nothing throws. Calls not served get ENOSYS, logged once per
// number by name. The handlers live in files by topic: syscalls_memory,
// syscalls_files, syscalls_tree, syscalls_proc_files, syscalls_events, syscalls_select, syscalls_process,
// syscalls_thread_state, syscalls_threads, syscalls_time, syscalls_signals,
// syscalls_cwd (the working directory, guest_cwd.h).
// No KVM here: unit tests and the fuzz target drive serve() directly.
// Threads: serve() may be called from every vCPU thread at once. The
// calls that block (futex waits, sleeps, poll, select, epoll waits) run unlocked
// and take the lock for what they read and write; every other call runs
// under one lock, so the allocator, the fd table and the share see one
// call at a time. A read or write of a pipe or eventfd that would block
// waits after the lock is released and is tried again. Console output is
// copied under the lock and written to the console after it (at most
// kConsoleChunk bytes a call), or to the VMM's own stdout or stderr where
// they are lent (ServerOptions::stdio).
#pragma once

#include <linux/kvm.h>
#include <poll.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvmtool-gpu/util/syscall_names.h"
#include "kvmtool-gpu/vmm/linux/fd_table.h"
#include "kvmtool-gpu/vmm/linux/file_window.h"
#include "kvmtool-gpu/vmm/linux/host_stdio.h"
#include "kvmtool-gpu/vmm/linux/guest_cwd.h"
#include "kvmtool-gpu/vmm/linux/guest_futex.h"
#include "kvmtool-gpu/vmm/linux/guest_mmap.h"
#include "kvmtool-gpu/vmm/linux/guest_proc_text.h"
#include "kvmtool-gpu/vmm/linux/guest_signals.h"
#include "kvmtool-gpu/vmm/linux/root_fs.h"
#include "kvmtool-gpu/vmm/linux/user_memory.h"

namespace kvmgpu::linux_abi {

class SyscallTrace; // syscall_trace.h

// Linux's PATH_MAX: the longest path a call reads from the guest.
inline constexpr uint64_t kPathMax = 4096;

struct SyscallCall {
    uint64_t nr = 0;
    uint64_t arg[6] = {};
    uint32_t tid = 1; // the calling thread (1: the first, whose id is also the pid)
};

// A thread that clone() asked for: the VMM gives it a vCPU that starts as
// a copy of the caller's at the return of the `syscall`, with RAX 0, this
// stack and this FS base.
struct ThreadStart {
    uint32_t tid = 0;
    uint64_t stack = 0;
    uint64_t fs_base = 0;
};

// What a system call may change in the vCPU besides RAX.
struct CpuState {
    uint64_t fs_base = 0, gs_base = 0;
};

struct SyscallOutcome {
    uint64_t nr = 0; // the call (set by LinuxProcess, for the run's last-state report)
    int64_t ret = 0;
    bool exited = false;        // exit_group (or exit of the last thread): the run ends with exit_code
    bool thread_exited = false; // exit: the calling thread ends (exit_code is its code)
    int exit_code = 0;
    std::optional<ThreadStart> clone; // clone: the VMM starts it, or calls clone_failed()
    std::string stopped;    // not empty: the run ends here, for this reason (one line)
};

// The guest's memory layout, fixed at start.
struct ProcessLayout {
    uint64_t managed_lo = 0, managed_hi = 0; // what brk and mmap hand out
    uint64_t brk_start = 0;
    uint64_t stack_lo = 0, stack_top = 0;
    std::vector<std::pair<uint64_t, uint64_t>> unmapped; // page 0, the guard
    uint64_t alias_tables_lo = 0, alias_tables_hi = 0;   // free pages for aliases' page tables
    // /proc/self/maps: the program and its interpreter (listed where their
    // pages are still reserved: guest_mmap.h), the vDSO and its data page.
    std::vector<MapsEntry> images;
};

// The most bytes one write (or writev) to the console takes; the rest is
// the caller's to write again, as with a short write to a pipe.
constexpr uint64_t kConsoleChunk = 64 * 1024;
constexpr uint64_t kSendfileChunk = 1024 * 1024;

struct ServerOptions {
    std::shared_ptr<const GuestFs> share;                 // the root and shares (root_fs.h); null: no files
    std::string exe_host_path;                            // /proc/self/exe opens this file
    std::string exe_guest_path = "/";                     // and reads as this link
    std::function<void(std::string_view)> console_text;   // stdout and stderr bytes
    // The VMM's own stdin, stdout and stderr as the guest's 0, 1 and 2, in
    // place of the console (--stdio raw); null: the console.
    std::shared_ptr<const HostStdio> stdio;
    // getrandom's bytes: with a seed (--seed), a generator's, so runs repeat;
    // without one, the host's getrandom(2), as unpredictable as Linux's.
    std::optional<uint64_t> seed;
    int max_fds = kMaxFds;                                // the guest's descriptor table (fd_table.h)
    std::string kernel_release = "6.1.0";                 // uname's release
    // The file window's memory slots (file_window.h); null: no window, file
    // mappings are copied into RAM.
    MemslotSetter window_slots;
    WindowLimits window_limits;
    // Where the guest starts (guest_cwd.h): "/", or an absolute guest path
    // naming a directory in `share` (the constructor throws
    // std::invalid_argument, naming --cwd, when it names none).
    std::string cwd = "/";
    // The guest's CPUID (/proc/cpuinfo's flags); empty: the host's.
    std::vector<kvm_cpuid_entry2> cpuid;
    std::shared_ptr<SyscallTrace> trace; // a line per call (--trace-syscalls); null: none
    // A futex wait first watches the word this long (guest_futex.h): a
    // handoff between two guest threads then resumes without waiting for
    // the waker's system call to reach the VMM.
    int64_t futex_spin_ns = 0;
};

// A handler to start (syscalls_signals.cpp): the signal, its action, the
// thread's sigaltstack and the mask the frame saves.
struct SignalDelivery {
    int sig = 0;
    int code = 0; // siginfo's si_code: SI_USER (kill) or SI_TKILL (tgkill, tkill)
    SigAction act;
    AltStack alt;
    uint64_t saved_mask = 0;
};
// What a pending signal does at a system call's return.
struct PendingSignal {
    std::optional<SignalDelivery> deliver;
    std::string ends; // not empty: the run ends (its default action), with this line
};

struct SyscallCounters {
    std::array<uint64_t, 512> calls{}; // by number; numbers >= 512 counted in calls[511]
    uint64_t total = 0;
    uint64_t ns = 0; // time spent in serve()
    uint64_t not_served = 0;
};

class SyscallServer {
public:
    SyscallServer(const memmap::GuestMemory& mem, ProcessLayout layout, ServerOptions opts);

    SyscallOutcome serve(const SyscallCall& call, CpuState& cpu);

    // Counters are written under their own lock: read them when no
    // vCPU runs (the end of the run), or from the vCPU thread in tests.
    const SyscallCounters& counters() const { return counters_; }
    // "N system calls (getpid 10000, write 3, ...), X ms serving them".
    std::string report() const;
    GuestAddressSpace& address_space() { return space_; }
    // The file window (nullptr: none; file_window.h), for the vCPUs' exits in it.
    FileWindow* file_window() { return window_.get(); }
    const UserMemory& user_memory() const { return user_; }
    FdTable& fds() { return fds_; }

    // Threads (syscalls_threads.cpp). A thread ended by exit: clears its
    // CLONE_CHILD_CLEARTID / set_tid_address word and wakes one waiter, as
    // Linux does (pthread_join waits on it).
    void thread_exit(uint32_t tid);
    // The VMM could not start the thread clone() described: forget it.
    void clone_failed(uint32_t tid);
    // The VM is ending: blocked calls (futex waits, sleeps) return -EINTR
    // within one slice (guest_futex.h) and new ones return at once.
    void request_stop() { stopping_.store(true, std::memory_order_release); }

    // Signals (syscalls_signals.cpp), for LinuxProcess. A fault's signal
    // for thread `tid`: its handler, the mask and SA_RESETHAND applied;
    // nullopt when it has none or blocks it (the fault ends the run).
    std::optional<SignalDelivery> fault_signal(uint32_t tid, int sig);
    // Where `addr` lies as /proc/self/maps names it: "PATH+0xOFFSET" (the
    // file's offset), "[heap]", an anonymous mapping, or "unmapped".
    std::string place_of(uint64_t addr) const;

    // At a system call's return: a pending, unblocked signal's handler, or the run's end.
    PendingSignal take_pending(uint32_t tid);
    // The frame went on (`on_altstack`): SS_AUTODISARM disarms the sigaltstack.
    void signal_frame_pushed(uint32_t tid, bool on_altstack);
    // rt_sigreturn: the mask and the sigaltstack its frame holds (none:
    // the sigaltstack stays as it is, as when Linux's sigreturn fails).
    void signal_returned(uint32_t tid, uint64_t mask, const std::optional<AltStack>& alt);
    bool stopping() const { return stopping_.load(std::memory_order_acquire); }

private:
    int64_t dispatch(const SyscallCall& c, CpuState& cpu, SyscallOutcome& out);
    // The calls that may block, served without the lock.
    static bool blocking(uint64_t nr);
    int64_t dispatch_blocking(const SyscallCall& c, SyscallOutcome& out);
    // syscalls_memory.cpp
    int64_t sys_brk(uint64_t want);
    int64_t sys_mmap(const uint64_t* a);
    int64_t sys_munmap(uint64_t addr, uint64_t len);
    int64_t sys_mprotect(uint64_t addr, uint64_t len, uint64_t prot);
    int64_t sys_mremap(const uint64_t* a);
    int64_t sys_madvise(uint64_t addr, uint64_t len, uint64_t advice);
    int64_t sys_alias(uint64_t va, uint64_t gpa, uint64_t len);
    // mmap's part in the file window: the address, -errno, or nullopt
    // where the window does not serve it (today's copy into RAM does).
    std::optional<int64_t> window_mmap(const uint64_t* a, uint64_t len, OpenFile* file);
    // syscalls_files.cpp
    int64_t sys_read(uint64_t fd, uint64_t buf, uint64_t len, int64_t offset);
    int64_t sys_write(uint64_t fd, uint64_t buf, uint64_t len, int64_t offset);
    // write/pwrite (offset >= 0) of bytes already checked to any descriptor kind.
    int64_t write_file(OpenFile& f, std::span<const uint8_t> src, int64_t offset);
    int64_t sys_iov(uint64_t fd, uint64_t iov, uint64_t count, bool write);
    // From a regular file to any writable descriptor, through a bounce buffer
    // (at most kSendfileChunk a call: a short count, as Linux may give).
    int64_t sys_sendfile(uint64_t out_fd, uint64_t in_fd, uint64_t offset_addr, uint64_t count);
    // process_vm_readv/writev on the guest itself (pid 1, the only process):
    // a copy between its own iovecs that reports a bad range as EFAULT
    // instead of faulting (tracers probe memory so).
    int64_t sys_process_vm(uint64_t pid, uint64_t local, uint64_t local_count, uint64_t remote, uint64_t remote_count,
                           uint64_t flags, bool write);
    // Takes up to kConsoleChunk bytes (in all, per call) into console_pending_,
    // for the lent stream `stdio` (1 or 2; -1: the console).
    int64_t console_write(std::span<const uint8_t> bytes, int stdio);
    // fds 0, 1, 2 as the VMM's own streams (ServerOptions::stdio).
    void lend_host_stdio();
    // The VMM's stream `stdio` under the guest's descriptor: its terminal
    // queries answered from the snapshot, nothing that changes it.
    int64_t stdio_ioctl(int stdio, uint64_t cmd, uint64_t arg);
    int64_t sys_openat(int64_t dirfd, uint64_t path, uint64_t flags, uint64_t mode);
    int64_t sys_close(uint64_t fd);
    int64_t sys_fstat(uint64_t fd, uint64_t buf);
    int64_t sys_newfstatat(int64_t dirfd, uint64_t path, uint64_t buf, uint64_t flags);
    int64_t sys_statx(int64_t dirfd, uint64_t path, uint64_t flags, uint64_t buf);
    int64_t sys_lseek(uint64_t fd, int64_t off, uint64_t whence);
    // FIONBIO (a pipe's or eventfd's O_NONBLOCK), FIOCLEX and FIONCLEX; else ENOTTY.
    int64_t sys_ioctl(uint64_t fd, uint64_t cmd, uint64_t arg);
    int64_t sys_readlinkat(int64_t dirfd, uint64_t path, uint64_t buf, uint64_t len);
    int64_t sys_faccessat(int64_t dirfd, uint64_t path, uint64_t mode);
    // syscalls_tree.cpp: mkdir, unlink, rmdir, rename, link, symlink in writable mounts
    int64_t sys_mkdirat(int64_t dirfd, uint64_t path_addr, uint64_t mode);
    int64_t sys_unlinkat(int64_t dirfd, uint64_t path_addr, uint64_t flags);
    int64_t sys_renameat2(int64_t from_dirfd, uint64_t from_addr, int64_t to_dirfd, uint64_t to_addr, uint64_t flags);
    int64_t sys_linkat(int64_t from_dirfd, uint64_t from_addr, int64_t to_dirfd, uint64_t to_addr, uint64_t flags);
    int64_t sys_symlinkat(uint64_t target_addr, int64_t dirfd, uint64_t path_addr);
    int64_t sys_getdents64(uint64_t fd, uint64_t buf, uint64_t len);
    int64_t sys_fcntl(uint64_t fd, uint64_t cmd, uint64_t arg);
    int64_t sys_dup(uint64_t oldfd, int64_t newfd, uint64_t flags, bool dup3);
    // The share directory descriptor an *at call's `path` resolves under: -1
    // for the root (an absolute path, or AT_FDCWD), else dirfd's, or -errno.
    int dir_host_fd(int64_t dirfd, const std::string& path) const;
    // syscalls_cwd.cpp. `path` from an *at call made absolute when it is
    // relative to AT_FDCWD (joined to the cwd); with `follow_cwd_link`,
    // /proc/self/cwd becomes the cwd's path. 0, or -ENOENT when the cwd is
    // gone, -ENAMETOOLONG.
    int64_t from_cwd(int64_t dirfd, std::string& path, bool follow_cwd_link);
    int64_t sys_chdir(uint64_t path_addr);
    int64_t sys_fchdir(uint64_t fd);
    int64_t sys_getcwd(uint64_t buf, uint64_t len);
    // syscalls_proc_files.cpp: the files the VMM makes up (/proc/self/exe,
    // /dev/null, /dev/stdout, /sys/devices/system/cpu/online, ...), for a
    // path that is absolute or relative to AT_FDCWD; nullopt for any other path.
    std::optional<int64_t> open_special(int64_t dirfd, const std::string& path, uint64_t flags);
    std::optional<int64_t> stat_special(int64_t dirfd, const std::string& path, uint64_t buf);
    std::optional<int64_t> readlink_special(int64_t dirfd, const std::string& path, uint64_t buf, uint64_t len);
    std::optional<int64_t> access_special(int64_t dirfd, const std::string& path, uint64_t mode);
    std::string maps() const; // /proc/self/maps
    std::vector<MapsEntry> maps_entries() const; // its lines, unsorted
    // getdents64 of /proc/self/fd: the descriptors open now, from the directory's position.
    int64_t proc_fd_entries(OpenFile& dir, uint64_t buf, uint64_t len);
    // syscalls_events.cpp
    int64_t sys_pipe2(uint64_t fds, uint64_t flags);
    int64_t sys_eventfd2(uint64_t initval, uint64_t flags);
    int64_t sys_epoll_create1(uint64_t flags);
    int64_t sys_epoll_ctl(uint64_t epfd, uint64_t op, uint64_t fd, uint64_t event);
    // The blocking ones (no lock held on entry).
    int64_t sys_poll(uint64_t fds, uint64_t nfds, const std::optional<FutexDeadline>& deadline);
    // poll's wait over pollfds already read from the guest (their revents
    // filled in): the count ready, or -errno.
    int64_t poll_files(std::vector<pollfd>& set, const std::optional<FutexDeadline>& deadline);
    // syscalls_select.cpp: select (`pselect` false: a timeval) and pselect6
    // (a timespec, and its {sigset, size} pair at `sigset_pair`, checked).
    int64_t sys_select(const uint64_t* a, bool pselect);
    int64_t sys_epoll_wait(uint64_t epfd, uint64_t events, int64_t max_events, const std::optional<FutexDeadline>& deadline);
    static std::optional<FutexDeadline> poll_deadline(int64_t timeout_ms); // negative: none
    // ppoll's time-out and signal mask checked; 0 or -errno.
    int64_t ppoll_deadline(uint64_t ts, uint64_t mask, uint64_t mask_size, std::optional<FutexDeadline>& deadline);
    bool epoll_ready_now(const OpenFile& ep); // a set's readiness, looked at once (poll of an epoll fd)
    // A read/write/readv/writev of a blocking pipe or eventfd that got
    // EAGAIN: the file to wait on and for what (under mu_), else nullptr.
    std::shared_ptr<OpenFile> stream_to_wait_on(const SyscallCall& c, short& events) const;
    int64_t stream_wait(const OpenFile& file, short events); // unlocked: 1 ready, -EINTR
    // syscalls_process.cpp
    int64_t sys_arch_prctl(uint64_t code, uint64_t addr, CpuState& cpu);
    int64_t sys_uname(uint64_t buf);
    int64_t sys_prlimit(uint64_t pid, uint64_t resource, uint64_t new_limit, uint64_t old_limit);
    int64_t sys_rt_sigaction(uint64_t sig, uint64_t act, uint64_t oldact, uint64_t size);
    int64_t sys_rt_sigprocmask(uint32_t tid, uint64_t how, uint64_t set, uint64_t oldset, uint64_t size);
    // syscalls_signals.cpp (under mu_)
    SigAction action(int sig) const;
    int64_t sys_kill(uint64_t pid, uint64_t sig);
    int64_t sys_tgkill(int64_t tgid, int64_t tid, uint64_t sig);
    std::optional<SignalDelivery> start_handler(uint32_t tid, int sig);
    int64_t sys_sched_getaffinity(uint64_t pid, uint64_t len, uint64_t mask);
    // sched_get_priority_max/min: Linux's bounds per policy (0 for the normal ones).
    static int64_t sched_priority_bound(uint64_t policy, bool max);
    int64_t sys_sched_setaffinity(uint64_t pid, uint64_t len, uint64_t mask);
    int64_t sys_sysinfo(uint64_t buf);
    // syscalls_thread_state.cpp
    struct ThreadState {
        std::string name;                    // prctl PR_SET_NAME
        uint64_t sigmask = 0;                // rt_sigprocmask: each thread's own, a new thread's its creator's
        uint64_t pending = 0;                // tgkill and tkill to this thread, not yet taken
        uint64_t altstack_sp = 0, altstack_size = 0; // sigaltstack; size 0: none
        int32_t altstack_flags = 0;          // SS_AUTODISARM as given
    };
    ThreadState& thread_state(uint32_t tid); // under mu_
    void forget_thread(uint32_t tid);        // under mu_: its state, and what was sent to it
    int64_t sys_prctl(uint32_t tid, uint64_t option, uint64_t arg2);
    int64_t sys_sigaltstack(uint32_t tid, uint64_t ss, uint64_t old_ss);
    // syscalls_threads.cpp
    int64_t sys_futex(const uint64_t* a, SyscallOutcome& out);
    int64_t sys_clone(uint32_t parent, const uint64_t* a, const CpuState& cpu, SyscallOutcome& out);
    int64_t sys_set_tid_address(uint32_t tid, uint64_t addr);
    // The host address of an aligned guest futex word, or nullptr (EFAULT / EINVAL decided by the caller).
    uint32_t* futex_word(uint64_t uaddr) const;
    int64_t sys_getrandom(uint64_t buf, uint64_t len, uint64_t flags);
    // syscalls_time.cpp
    int64_t sys_clock_gettime(uint64_t clock, uint64_t ts);
    int64_t sys_clock_getres(uint64_t clock, uint64_t ts);
    int64_t sys_gettimeofday(uint64_t tv);
    int64_t sys_time(uint64_t t);
    int64_t sys_nanosleep(uint64_t clock, uint64_t flags, uint64_t req, uint64_t rem);

    std::mutex mu_;          // every call but the blocking ones
    std::mutex counters_mu_; // counters_ (apart from mu_: a woken thread counts its call without waiting for others)
    std::atomic<bool> stopping_{false};
    std::atomic<uint32_t> next_tid_{2};
    std::atomic<uint32_t> live_threads_{1}; // an untimed wait with no other thread is a deadlock
    std::map<uint32_t, uint64_t> clear_tid_; // tid -> CLONE_CHILD_CLEARTID word (guest address); under mu_
    std::map<uint32_t, ThreadState> threads_; // under mu_; made at clone (the first thread's at its first use), gone at exit
    int dumpable_ = 1;                        // prctl PR_GET_DUMPABLE; under mu_
    const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now(); // sysinfo's uptime
    std::string console_pending_; // this call's console bytes, under mu_; written out after it
    int console_stdio_ = -1;      // the lent stream they go to (1, 2), or -1 for the console; under mu_
    GuestAliases aliases_; // before user_, which reads it
    std::unique_ptr<FileWindow> window_; // before user_, which reads it
    UserMemory user_;
    ProcessLayout layout_;
    ServerOptions opts_;
    GuestAddressSpace space_;
    FdTable fds_;
    GuestCwd cwd_; // under mu_: one for the process, as its threads share Linux's
    SyscallCounters counters_;
    std::array<bool, 512> warned_{};
    std::array<uint8_t, 64 * 32> sigactions_{}; // 64 signals x struct kernel_sigaction (32 bytes)
    // Signals the guest sent its process (kill), not yet taken: changed
    // under mu_, read without it first so that a return with nothing
    // pending takes no lock; and how many threads have one sent to them.
    std::atomic<uint64_t> pending_{0};
    std::atomic<uint32_t> threads_with_pending_{0};
    std::array<int, 64> pending_code_{}; // each process-wide one's si_code (a thread's: SI_TKILL)
    uint64_t rng_; // the seeded generator's state (opts_.seed set)
};

// "getpid", "kvmgpu_alias", or "syscall 999" for a number the build's
// headers do not name.
std::string syscall_name(uint64_t nr);

} // namespace kvmgpu::linux_abi
