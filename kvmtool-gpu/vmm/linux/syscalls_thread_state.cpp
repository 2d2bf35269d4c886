// What a thread records about itself: its name (prctl PR_SET_NAME, as
// pthread_setname_np sets it), its signal mask and the signals sent to it
// (syscalls_signals.cpp), and its alternate signal stack (sigaltstack,
// as Python's faulthandler and Go-style runtimes install one): a handler
// with SA_ONSTACK gets its frame there (guest_signals.h). prctl serves the few options ordinary programs use at
// start-up; the rest are EINVAL.
#include <signal.h>
#include <sys/prctl.h>

#include <cerrno>
#include <cstring>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr size_t kCommLen = 16; // TASK_COMM_LEN, with its NUL
constexpr uint64_t kMinSigStackSize = 2048; // MINSIGSTKSZ
constexpr int kSsAutodisarm = 1 << 31;

struct GuestStack { // the x86-64 kernel's stack_t
    uint64_t sp;
    int32_t flags;
    int32_t pad;
    uint64_t size;
};
static_assert(sizeof(GuestStack) == 24);
} // namespace

SyscallServer::ThreadState& SyscallServer::thread_state(uint32_t tid) {
    auto [it, added] = threads_.try_emplace(tid);
    if (added) {
        // The program's file name (Linux copies the creating thread's name at clone; here a
        // thread that names none has the program's).
        const std::string& exe = opts_.exe_guest_path;
        it->second.name = exe.substr(exe.find_last_of('/') + 1).substr(0, kCommLen - 1);
    }
    return it->second;
}

void SyscallServer::forget_thread(uint32_t tid) {
    const auto it = threads_.find(tid);
    if (it == threads_.end()) return;
    if (it->second.pending) threads_with_pending_.fetch_sub(1, std::memory_order_acq_rel);
    threads_.erase(it);
}

int64_t SyscallServer::sys_prctl(uint32_t tid, uint64_t option, uint64_t arg2) {
    switch (option) {
    case PR_SET_NAME: {
        // As strncpy_from_user: at most 15 bytes, a fault only where a byte is read.
        std::string name;
        for (uint64_t i = 0; i < kCommLen - 1; ++i) {
            uint64_t at;
            if (__builtin_add_overflow(arg2, i, &at)) return -EFAULT;
            const auto byte = user_.read_obj<char>(at);
            if (!byte) return -EFAULT;
            if (*byte == 0) break;
            name.push_back(*byte);
        }
        thread_state(tid).name = name;
        return 0;
    }
    case PR_GET_NAME: {
        char out[kCommLen] = {};
        const std::string& name = thread_state(tid).name;
        std::memcpy(out, name.data(), std::min(name.size(), kCommLen - 1));
        return user_.write(arg2, out, sizeof out) ? 0 : -EFAULT;
    }
    case PR_SET_PDEATHSIG: // the guest has no parent process to outlive it: recorded as accepted
        return arg2 <= 64 ? 0 : -EINVAL;
    case PR_GET_DUMPABLE: return dumpable_;
    case PR_SET_DUMPABLE:
        if (arg2 > 1) return -EINVAL;
        dumpable_ = static_cast<int>(arg2);
        return 0;
    default: return -EINVAL;
    }
}

int64_t SyscallServer::sys_sigaltstack(uint32_t tid, uint64_t ss, uint64_t old_ss) {
    GuestStack wanted{};
    if (ss && !user_.read(ss, &wanted, sizeof wanted)) return -EFAULT;
    if (old_ss && !user_.span(old_ss, sizeof(GuestStack))) return -EFAULT;
    ThreadState& t = thread_state(tid);
    if (old_ss) {
        GuestStack old{};
        old.sp = t.altstack_sp;
        old.size = t.altstack_size;
        old.flags = t.altstack_size ? t.altstack_flags : SS_DISABLE; // SS_ONSTACK is not told (the caller's RSP is not known here)
        if (!user_.write_obj(old_ss, old)) return -EFAULT;
    }
    if (!ss) return 0;
    const int mode = wanted.flags & ~kSsAutodisarm;
    if (mode != 0 && mode != SS_DISABLE && mode != SS_ONSTACK) return -EINVAL;
    if (mode == SS_DISABLE) {
        t.altstack_sp = t.altstack_size = 0;
        return 0;
    }
    if (wanted.size < kMinSigStackSize) return -ENOMEM;
    t.altstack_sp = wanted.sp;
    t.altstack_size = wanted.size;
    t.altstack_flags = wanted.flags & kSsAutodisarm;
    return 0;
}

} // namespace kvmgpu::linux_abi
