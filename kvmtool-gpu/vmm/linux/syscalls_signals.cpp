// Signals a guest sends itself and signals for its own faults: which
// handler runs, with what mask, and what happens without one. Each thread
// has its own mask (rt_sigprocmask; a new thread starts with its
// creator's). kill(1 or 0, sig) makes the signal pending for the process
// (one bit a signal, as Linux's standard signals): the next thread to
// return from a system call with it unblocked takes it. tgkill(1, tid,
// sig) and tkill(tid, sig) make it pending for that thread alone, taken at
// its own return once its mask allows, before the process's (as Linux
// dequeues). LinuxProcess pushes the frame (guest_signals.h). Without a handler the
// default action applies: ignored (SIGCHLD, SIGCONT, SIGURG, SIGWINCH, and
// the stop signals, there being no job control), else the run ends with
// one line naming the signal. A fault's signal goes to the faulting thread
// only if its handler is installed and the signal not blocked, as Linux's
// forced signals: otherwise the fault ends the run as before.
#include <cerrno>
#include <cstring>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr uint64_t kActionBytes = 32;
constexpr uint64_t kUnblockable = (1ull << 8) | (1ull << 18); // SIGKILL, SIGSTOP
constexpr int kSigKill = 9;
constexpr uint64_t bit(int sig) { return 1ull << (sig - 1); }

bool default_ignored(int sig) {
    return sig == 17 || sig == 18 || sig == 23 || sig == 28 || (sig >= 19 && sig <= 22);
}
} // namespace

SigAction SyscallServer::action(int sig) const {
    SigAction a;
    std::memcpy(&a, &sigactions_[(sig - 1) * kActionBytes], sizeof a);
    return a;
}

int64_t SyscallServer::sys_kill(uint64_t pid, uint64_t sig) {
    const auto p = static_cast<int32_t>(pid);
    if (sig > 64) return -EINVAL;
    if (p != 1 && p != 0 && p != -1) return -ESRCH; // the guest is the only process it can see
    if (sig) {
        pending_ |= bit(static_cast<int>(sig));
        pending_code_[sig - 1] = 0; // SI_USER
    }
    return 0;
}

int64_t SyscallServer::sys_tgkill(int64_t tgid, int64_t tid, uint64_t sig) {
    if (sig > 64 || tid <= 0 || (tgid != -1 && tgid <= 0)) return -EINVAL;
    if (tgid != -1 && tgid != 1) return -ESRCH;
    if (tid >= next_tid_.load() || (tid != 1 && !threads_.contains(static_cast<uint32_t>(tid)))) return -ESRCH; // never made, or gone
    if (sig) {
        ThreadState& t = thread_state(static_cast<uint32_t>(tid));
        if (!t.pending) threads_with_pending_.fetch_add(1, std::memory_order_acq_rel);
        t.pending |= bit(static_cast<int>(sig));
    }
    return 0;
}

std::optional<SignalDelivery> SyscallServer::start_handler(uint32_t tid, int sig) {
    const SigAction a = action(sig);
    if (a.handler == kSigDefault || a.handler == kSigIgnore) return std::nullopt;
    ThreadState& t = thread_state(tid);
    SignalDelivery d{sig, 0, a, {}, t.sigmask};
    d.alt = AltStack{t.altstack_sp, t.altstack_size, t.altstack_flags};
    t.sigmask |= a.mask | ((a.flags & kSaNodefer) ? 0 : bit(sig));
    t.sigmask &= ~kUnblockable;
    if (a.flags & kSaResethand) { // one-shot: back to the default action
        SigAction reset = a;
        reset.handler = kSigDefault;
        reset.flags &= ~kSaSiginfo;
        std::memcpy(&sigactions_[(sig - 1) * kActionBytes], &reset, sizeof reset);
    }
    return d;
}

std::optional<SignalDelivery> SyscallServer::fault_signal(uint32_t tid, int sig) {
    std::lock_guard lock(mu_);
    if (thread_state(tid).sigmask & bit(sig)) return std::nullopt; // blocked: Linux kills, and so does the run's end
    return start_handler(tid, sig);
}

PendingSignal SyscallServer::take_pending(uint32_t tid) {
    PendingSignal out;
    // The common case, nothing sent to anyone: no lock.
    if (pending_.load(std::memory_order_acquire) == 0 && threads_with_pending_.load(std::memory_order_acquire) == 0)
        return out;
    std::lock_guard lock(mu_);
    ThreadState& t = thread_state(tid);
    if ((pending_ | t.pending) & bit(kSigKill)) {
        pending_ = 0;
        out.ends = "guest ended by SIGKILL, sent by itself";
        return out;
    }
    // This thread's own first, then the process's.
    for (const bool own : {true, false}) {
        for (int sig = 1; sig <= 64; ++sig) {
            const uint64_t waiting = own ? t.pending : pending_.load();
            if (!(waiting & bit(sig)) || (t.sigmask & bit(sig))) continue;
            if (own) {
                t.pending &= ~bit(sig);
                if (!t.pending) threads_with_pending_.fetch_sub(1, std::memory_order_acq_rel);
            } else {
                pending_ &= ~bit(sig);
            }
            const SigAction a = action(sig);
            if (a.handler == kSigIgnore || (a.handler == kSigDefault && default_ignored(sig))) continue;
            if (a.handler == kSigDefault) {
                out.ends = "guest ended by " + signal_name(sig) + ", sent by itself with no handler (its default action)";
                return out;
            }
            out.deliver = start_handler(tid, sig);
            out.deliver->code = own ? -6 /* SI_TKILL */ : pending_code_[sig - 1];
            return out;
        }
    }
    return out;
}

void SyscallServer::signal_frame_pushed(uint32_t tid, bool on_altstack) {
    std::lock_guard lock(mu_);
    ThreadState& t = thread_state(tid);
    constexpr int kSsAutodisarm = 1 << 31;
    if (on_altstack && (t.altstack_flags & kSsAutodisarm)) t.altstack_sp = t.altstack_size = 0;
}

void SyscallServer::signal_returned(uint32_t tid, uint64_t mask, const std::optional<AltStack>& given) {
    std::lock_guard lock(mu_);
    ThreadState& t = thread_state(tid);
    t.sigmask = mask & ~kUnblockable;
    if (!given) return;
    const AltStack& alt = *given;
    // uc_stack as sigaltstack would take it; a value it would refuse is left alone (Linux fails the
    // sigreturn there; the stack a handler found is kept instead).
    constexpr int kSsDisable = 2, kSsOnstack = 1, kSsAutodisarm = 1 << 31;
    const int mode = alt.flags & ~kSsAutodisarm;
    if (mode == kSsDisable) t.altstack_sp = t.altstack_size = 0;
    else if ((mode == 0 || mode == kSsOnstack) && alt.size >= 2048) {
        t.altstack_sp = alt.sp;
        t.altstack_size = alt.size;
        t.altstack_flags = alt.flags & kSsAutodisarm;
    }
}

} // namespace kvmgpu::linux_abi
