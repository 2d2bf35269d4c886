// Threads as glibc's pthread_create, pthread_join and its locks use them:
// clone with the flags of a thread (the VMM gives the new thread a vCPU;
// see guest_threads.h), set_tid_address and CLONE_CHILD_CLEARTID (the word
// pthread_join waits on), and futex on guest words (guest_futex.h).
// Processes (fork, vfork: clone without CLONE_VM or CLONE_THREAD) are not
// offered.
#include <linux/futex.h>
#include <linux/sched.h>

#include <cerrno>
#include <climits>
#include <utility>
#include <sys/syscall.h>

#include "kvmtool-gpu/util/log.h"
#include "kvmtool-gpu/vmm/linux/guest_futex.h"
#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr uint64_t kUserTop = 1ull << 47;
// What a thread needs (CLONE_SYSVSEM is accepted: there is one process).
constexpr uint64_t kThreadFlags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
constexpr uint64_t kOptionalFlags =
    CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID | CLONE_DETACHED;
} // namespace

uint32_t* SyscallServer::futex_word(uint64_t uaddr) const {
    if (uaddr % 4) return nullptr;
    const auto s = user_.span(uaddr, 4);
    return s ? reinterpret_cast<uint32_t*>(s->data()) : nullptr;
}

int64_t SyscallServer::sys_clone(uint32_t parent, const uint64_t* a, const CpuState& cpu, SyscallOutcome& out) {
    // x86-64 order: flags, stack, parent_tid, child_tid, tls.
    const uint64_t flags = a[0], stack = a[1], parent_tid = a[2], child_tid = a[3], tls = a[4];
    if ((flags & kThreadFlags) != kThreadFlags) {
        if (!(flags & CLONE_VM) && !(flags & CLONE_THREAD)) {
            if (!std::exchange(warned_[SYS_clone], true))
                log_warn("linux guest: clone without CLONE_VM (a new process, fork): not offered, ENOSYS");
            return -ENOSYS;
        }
        return -EINVAL; // a thread that shares only part of the process: Linux refuses most such mixes too
    }
    if (flags & ~(kThreadFlags | kOptionalFlags)) return -EINVAL; // exit signal, namespaces, vfork, pidfd, ...
    if (stack < 8 || !user_.span(stack - 8, 8)) return -EINVAL; // the child's first push must land in RAM
    if ((flags & CLONE_SETTLS) && tls >= kUserTop) return -EPERM;
    if ((flags & CLONE_PARENT_SETTID) && !user_.span(parent_tid, 4)) return -EFAULT;
    if ((flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID)) && !user_.span(child_tid, 4)) return -EFAULT;

    const uint32_t tid = next_tid_.fetch_add(1, std::memory_order_relaxed);
    if (tid > INT32_MAX) return -EAGAIN; // ids never wrap into negative numbers
    // Written before the thread runs, as Linux does.
    if (flags & CLONE_PARENT_SETTID) user_.write_obj(parent_tid, tid);
    if (flags & CLONE_CHILD_SETTID) user_.write_obj(child_tid, tid);
    if (flags & CLONE_CHILD_CLEARTID) clear_tid_[tid] = child_tid;
    const uint64_t mask = thread_state(parent).sigmask; // Linux: the creator's mask, nothing pending
    thread_state(tid).sigmask = mask;
    live_threads_.fetch_add(1, std::memory_order_acq_rel);
    out.clone = ThreadStart{tid, stack, (flags & CLONE_SETTLS) ? tls : cpu.fs_base};
    return tid;
}

void SyscallServer::clone_failed(uint32_t tid) {
    std::lock_guard lock(mu_);
    clear_tid_.erase(tid);
    forget_thread(tid);
    live_threads_.fetch_sub(1, std::memory_order_acq_rel);
}

int64_t SyscallServer::sys_set_tid_address(uint32_t tid, uint64_t addr) {
    if (addr) clear_tid_[tid] = addr; // checked when used: Linux accepts any address here
    else clear_tid_.erase(tid);
    return tid;
}

void SyscallServer::thread_exit(uint32_t tid) {
    uint32_t* word = nullptr;
    {
        std::lock_guard lock(mu_);
        if (const auto it = clear_tid_.find(tid); it != clear_tid_.end()) {
            word = futex_word(it->second);
            clear_tid_.erase(it);
        }
        forget_thread(tid);
    }
    // Outside the lock: the woken thread's next call must not wait for this one.
    if (word) {
        __atomic_store_n(word, 0, __ATOMIC_RELEASE);
        futex_wake(word, 1, FUTEX_BITSET_MATCH_ANY);
    }
    // Counted out last: a joiner that sees one thread left must also see the
    // word cleared, or it would take its wait for a deadlock (it did, under load).
    live_threads_.fetch_sub(1, std::memory_order_acq_rel);
}

int64_t SyscallServer::sys_futex(const uint64_t* a, SyscallOutcome& out) {
    const uint64_t uaddr = a[0], cmd = a[1] & 0x7f;
    const bool realtime = a[1] & FUTEX_CLOCK_REALTIME;
    if (a[1] & ~uint64_t{0x7f | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME}) return -ENOSYS; // commands are below 128
    if (uaddr % 4) return -EINVAL;
    uint32_t* word = futex_word(uaddr);
    if (!word) return -EFAULT;
    const auto count = static_cast<int>(std::min<uint64_t>(static_cast<uint32_t>(a[2]), INT_MAX));
    switch (cmd) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET: {
        const uint32_t bitset = cmd == FUTEX_WAIT ? FUTEX_BITSET_MATCH_ANY : static_cast<uint32_t>(a[5]);
        if (bitset == 0) return -EINVAL;
        if (realtime && cmd == FUTEX_WAIT) return -ENOSYS; // Linux: CLOCK_REALTIME only with the bitset form
        std::optional<FutexDeadline> deadline;
        if (a[3]) {
            const auto t = user_.read_obj<timespec>(a[3]);
            if (!t) return -EFAULT;
            if (t->tv_sec < 0 || t->tv_nsec < 0 || t->tv_nsec >= 1'000'000'000) return -EINVAL;
            // FUTEX_WAIT's time-out is relative (on the monotonic clock); the bitset form's absolute.
            if (cmd == FUTEX_WAIT) deadline = deadline_after(CLOCK_MONOTONIC, *t);
            else deadline = FutexDeadline{realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, *t};
        } else if (live_threads_.load(std::memory_order_acquire) <= 1 &&
                   __atomic_load_n(word, __ATOMIC_ACQUIRE) == static_cast<uint32_t>(a[2])) {
            // The only thread waits for a value only another thread could change.
            out.stopped = "guest waits on a futex with no other thread to wake it (deadlock)";
            return -EINTR;
        }
        return futex_wait(word, static_cast<uint32_t>(a[2]), bitset, deadline, stopping_, opts_.futex_spin_ns);
    }
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET: {
        const uint32_t bitset = cmd == FUTEX_WAKE ? FUTEX_BITSET_MATCH_ANY : static_cast<uint32_t>(a[5]);
        if (bitset == 0) return -EINVAL;
        return futex_wake(word, count, bitset);
    }
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE: {
        // Waiters are woken instead of moved (they see a spurious wake-up
        // and wait again on the right word): the second word is checked
        // like the first, as Linux would.
        if (!futex_word(a[4])) return a[4] % 4 ? -EINVAL : -EFAULT;
        if (cmd == FUTEX_CMP_REQUEUE && __atomic_load_n(word, __ATOMIC_ACQUIRE) != static_cast<uint32_t>(a[5]))
            return -EAGAIN;
        const auto moved = static_cast<int>(std::min<uint64_t>(a[3], INT_MAX));
        return futex_wake(word, moved > INT_MAX - count ? INT_MAX : count + moved, FUTEX_BITSET_MATCH_ANY);
    }
    default: return -ENOSYS; // WAKE_OP and the priority-inheritance locks: glibc's default mutexes use neither
    }
}

} // namespace kvmgpu::linux_abi
