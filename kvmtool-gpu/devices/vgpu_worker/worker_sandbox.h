// The GPU worker's sandbox (--worker-sandbox on), in two steps:
//  1. right after the fork, while the worker is still one thread (so every
//     thread the driver starts later shares them): its own network namespace
//     (no interfaces, no sockets to the outside) and mount namespace, where
//     the kernel permits (root, or CAP_SYS_ADMIN); every capability but
//     CAP_SYS_ADMIN dropped, for this thread and every later one;
//  2. once the backend has started (CUDA initialised, guest RAM registered
//     where eager): each mount but /dev's read-only (in its own mount
//     namespace only), no capabilities left on this thread, not dumpable,
//     PR_SET_NO_NEW_PRIVS, and a seccomp filter on every
//     thread (SECCOMP_FILTER_FLAG_TSYNC) made from worker_syscalls.cpp's table:
//     a call it refuses never runs; the worker names it on stderr (the
//     VMM's) and ends with SIGSYS (util/seccomp_report.h), and the VMM sees
//     that and replaces it (worker_engine.h).
// No PID namespace: the worker is forked by the VMM, and unshare(CLONE_NEWPID)
// moves only later children, of which it has none (clone of a process is
// denied); kill and tgkill are allowed at its own pid only.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace kvmgpu::vgpu {

// Step 1. Says what it did ("network and mount namespaces", or why none).
// host_shm: the worker keeps the host's /dev/shm (an MPS client's).
std::string enter_worker_namespaces(bool host_shm);

// Step 2 found every mount but the worker's own /dev read-only and allows
// opens for writing (false before step 2, and without the sandbox).
bool worker_writable_opens_confined();

// The filter for a worker whose pid is `self` (for tests and docs).
std::vector<sock_filter> worker_seccomp_program(pid_t self);

// Step 2. Throws std::system_error naming the failing call. Says what it did.
std::string confine_worker();

} // namespace kvmgpu::vgpu
