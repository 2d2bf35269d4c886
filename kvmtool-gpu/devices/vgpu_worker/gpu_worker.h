// The GPU worker: what a process started for one VM runs (from the worker
// zygote, worker_zygote.h). It is given its VM's memory as descriptors and
// nothing else (worker_recipe.h), makes its own backends, one per guest
// device (through a factory, so tests can host the host backend) and, on
// Start, an InlineEngine over it and the VM's guest RAM. Before it makes
// them it checks that it maps no other VM's memory. With
// VgpuOptions::worker_sandbox it enters its own namespaces first and
// confines itself once Start has made its engine (worker_sandbox.h);
// KVMGPU_WORKER_SYSCALL_LOG records its system calls instead
// (syscall_recorder.h). On Attach it becomes the ring's consumer: it runs
// the ring's commands in guest RAM and completes them there, polling while
// they come and sleeping on its VM's kick eventfd (RingWaiter), until told
// to quit or until the VMM is gone, and _exit()s.
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
// with a one-line *why. A plain function and an argument rather than a
// closure: the worker starts from a zygote forked before any VM existed,
// which has the VMM's functions at the same addresses (it is a fork of the
// VMM) but none of its later data, so a factory crosses as the function's
// address and its argument. The function must be in the program or a
// library loaded before the zygote started.
struct BackendFactory {
    DeviceBackends (*make)(const std::string& arg, std::string* why) = nullptr;
    std::string arg;
    DeviceBackends operator()(std::string* why) const { return make(arg, why); }
};

using EnvList = std::vector<std::pair<std::string, std::string>>;

// What a worker runs with, in the worker (built from its recipe).
struct WorkerSetup {
    const memmap::GuestMemory* mem; // its own mapping of its VM's RAM
    BackendFactory make;
    VgpuOptions opts;
    VgpuCounters* counters; // in memory shared with the VMM
    uint32_t handle_seed;
    int kick_fd; // the ring's kick eventfd
    // Every mapping of its VM's memory it holds (RAM, channel, counters): all
    // it may map of any VM's (foreign_vm_mapping).
    std::vector<memmap::ForkShare> own = {};
    // Set in the worker before its backend is made (the MPS client's
    // variables: CUDA reads them when it initialises).
    EnvList env = {};
};

// Runs in the worker once its memory is mapped; never returns. `parent` is the VMM's pid.
[[noreturn]] void run_gpu_worker(WorkerChannel& channel, const WorkerSetup& setup, pid_t parent);

} // namespace kvmgpu::vgpu
