// The report of a call that a seccomp filter refused with SECCOMP_RET_TRAP
// (the vCPU thread's, vmm/vcpu_seccomp.cpp, and the GPU worker's,
// devices/vgpu_worker/worker_sandbox.cpp): the kernel skips the call and
// raises SIGSYS in the thread that made it, whose handler writes two lines on
// stderr (the call's name, number and first arguments; then the program code
// offsets on the thread's stack, for addr2line) and ends the process with
// SIGSYS. Signal dispositions are per process: one report per process.
#pragma once

#include <linux/seccomp.h>

#include <cstdint>

namespace kvmgpu::seccomp {

// What a report says, as string literals (the handler reads them whenever a
// call is refused). Its first line reads
//   "<prefix>: fatal: <filter> refused system call socket (0x29, arguments
//    0x2 0x1 0x0): <outcome>"
// and its second "<prefix>: the call's stack holds these VMM code offsets: ...".
struct RefusalReport {
    const char* prefix;  // "kvmtool-gpu", "vgpu-worker": as the process's other lines start
    const char* filter;  // "the vCPU thread's seccomp filter"
    const char* outcome; // what happens next, and what to do about it
};

// Installs the process's SIGSYS handler that reports as `report` says. Call it
// before the filter, from the thread or process the filter confines.
void report_refused_calls(const RefusalReport& report);

// The action a reporting filter returns for a call it refuses.
inline constexpr uint32_t kRefuseAndReport = SECCOMP_RET_TRAP;

} // namespace kvmgpu::seccomp
