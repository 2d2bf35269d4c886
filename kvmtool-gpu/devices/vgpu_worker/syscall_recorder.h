// Records the GPU worker's system calls where neither strace nor perf
// exists (the H100 machine), with seccomp itself: KVMGPU_WORKER_SYSCALL_LOG=DIR
// in the VMM's environment makes each worker write DIR/worker-<pid>.txt.
//
// Right after the fork, while the worker is one thread, its main thread
// installs a filter that answers every call with SECCOMP_RET_USER_NOTIF, so
// every thread the driver starts later inherits it. A recorder thread started
// just before (and so not under the filter) receives each call, counts it by
// phase (before: from the fork until the backend has started; after: from
// then on) and by what the sandbox's table would do with it
// (worker_syscalls.h), and lets it run unchanged (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
// Paths opened after the start are kept too (up to 256). The file is
// rewritten when a new kind of call appears, at most a second apart
// otherwise, and at the worker's exit_group (a worker killed by SIGKILL keeps
// the last one). Recording replaces the sandbox's second step (the
// namespaces stay; the mounts stay writable, for the file); each call then
// costs a round trip to the recorder thread (microseconds).
#pragma once

#include <string>

namespace kvmgpu::vgpu {

// The environment variable that names the directory.
inline constexpr const char* kWorkerSyscallLogEnv = "KVMGPU_WORKER_SYSCALL_LOG";

class SyscallRecorder {
public:
    // Starts recording this process into `dir`: nullptr with *why when it
    // cannot. Lives until the process ends (never destroyed: the worker
    // _exit()s, and its thread answers the calls until then).
    static SyscallRecorder* start(const std::string& dir, std::string* why);
    // From now on, calls count as "after".
    void backend_started();

private:
    SyscallRecorder() = default;
    struct State;
    State* s_ = nullptr;
};

} // namespace kvmgpu::vgpu
