// The GPU worker's system-call allowlist after its backend has started:
// ONE table (worker_syscalls.cpp), from which the sandbox's seccomp filter
// (worker_sandbox.cpp) and the recorder's labels (syscall_recorder.cpp) are
// made. To change what the worker may do, edit that table only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>

namespace kvmgpu::vgpu {

// What the filter does with a listed call, by its arguments. A call not in
// the table, or refused by its rule, ends the worker after a report naming
// it (worker_sandbox.h).
enum class SyscallRule : uint8_t {
    Allow,        // whatever its arguments
    ThreadsOnly,  // clone: only with CLONE_THREAD (a thread of the worker, never a new process)
    OwnProcess,   // kill, tgkill: only at the worker's own pid (argument 0)
    NotTerminal,  // ioctl: any but TIOCSTI and TIOCLINUX (typing into an inherited terminal)
    ReadOnlyOpen, // openat: opens for writing, creating or truncating fail EROFS
    Enosys,       // fails ENOSYS (clone3, whose flags BPF cannot read: glibc falls back to clone)
};

struct WorkerSyscall {
    int nr;
    SyscallRule rule;
};

std::span<const WorkerSyscall> worker_syscalls();

// What the filter does with one call (the recorder's label).
// writable_opens_confined: the sandbox allows opens for writing, having
// confined them to the worker's own /dev (worker_sandbox.h).
enum class Verdict : uint8_t { Allowed, Refused /* fails with an errno */, Killed };
Verdict worker_verdict(int nr, const uint64_t (&args)[6], pid_t self, bool writable_opens_confined);
const char* to_string(Verdict v);

} // namespace kvmgpu::vgpu
