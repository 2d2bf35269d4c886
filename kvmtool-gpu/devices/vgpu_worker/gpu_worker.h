// The GPU worker: what a process forked by WorkerEngine runs. It makes its
// own backends, one per guest device (through a factory, so tests can host the host backend)
// and, on Start, an InlineEngine over it and the VM's guest RAM. No fork
// inherits guest RAM, the channel or the counters (memmap/fork_sharing.h):
// the worker keeps the descriptors of its own VM's and nothing else, and
// maps them again at the VMM's addresses, so it sees the VMM's pages there
// and no other VM's. With VgpuOptions::worker_sandbox it enters its own
// namespaces right after the fork and confines itself once Start has made
// its engine (worker_sandbox.h); KVMGPU_WORKER_SYSCALL_LOG records its
// system calls instead (syscall_recorder.h). On Attach it becomes the ring's
// consumer: it runs the ring's commands in guest RAM and completes them
// there, polling while they come and sleeping on the kick eventfd it
// inherited (RingWaiter), until told to quit or until the VMM is gone, and
// _exit()s.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_counters.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_options.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_channel.h"
#include "memmap/fork_sharing.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::vgpu {

// Makes the worker's backends (one per guest device), in the worker; none
// with a one-line *why.
using BackendFactory = std::function<DeviceBackends(std::string* why)>;

// What a worker is forked with (valid in the child: fork copies it).
struct WorkerSetup {
    const memmap::GuestMemory* mem;
    BackendFactory make;
    VgpuOptions opts;
    VgpuCounters* counters; // in memory shared with the VMM
    uint32_t handle_seed;
    int kick_fd; // the ring's kick eventfd, kept open across the fork
    // Memory kept from forks (memmap/fork_sharing.h) that this worker maps
    // again, beside its VM's RAM regions and its channel: the counters.
    std::vector<memmap::ForkShare> shares = {};
    // Set in the worker before its backend is made (the MPS client's
    // variables: CUDA reads them when it initialises).
    std::vector<std::pair<std::string, std::string>> env = {};
};

// Runs in the child after fork(); never returns. `parent` is the VMM's pid.
[[noreturn]] void run_gpu_worker(WorkerChannel& channel, const WorkerSetup& setup, pid_t parent);

} // namespace kvmgpu::vgpu
