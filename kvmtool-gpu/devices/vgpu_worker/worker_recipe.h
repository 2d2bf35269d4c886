// What a GPU worker is started from: everything it learns of its VM, as
// bytes and descriptors, so that a process that never saw the VM (the worker
// zygote, worker_zygote.h) can start it. The descriptors follow the
// vhost-user shape: the VM's guest RAM regions, the worker's channel, the
// vGPU counters and the ring's kick eventfd, and nothing else.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu_worker/gpu_worker.h"

namespace kvmgpu::vgpu {

struct WorkerRecipe {
    BackendFactory make;
    VgpuOptions opts;
    uint32_t handle_seed = 0;
    EnvList env;
    uint32_t spin_us = 50;                       // the channel's spin before sleeping
    const memmap::GuestMemory* mem = nullptr;    // its regions' descriptors are sent
    const WorkerChannel* channel = nullptr;      // its descriptor is sent
    memmap::ForkShare counters{};                // a VgpuCounters in memory kept from forks
    int kick_fd = -1;
};

// Bounds a recipe must keep (encode_recipe throws std::length_error past them).
inline constexpr size_t kRecipeMaxBytes = 64 << 10;
inline constexpr size_t kRecipeMaxRegions = 64;
inline constexpr size_t kRecipeMaxFds = 3 + kRecipeMaxRegions;

// The recipe as bytes; `fds` gets the descriptors to send beside them (the
// caller's still: nothing is duplicated).
std::vector<uint8_t> encode_recipe(const WorkerRecipe& r, std::vector<int>* fds);

// In a new worker process: maps what `bytes` and `fds` describe (the
// descriptors are its own from then on) and runs the worker; `vmm` is its
// parent. Never returns: a recipe it cannot use ends the process (status 1)
// with one line on stderr, which the VMM sees as a worker that ended before
// its start.
[[noreturn]] void run_worker_from_recipe(std::span<const uint8_t> bytes, std::span<const int> fds, pid_t vmm);

} // namespace kvmgpu::vgpu
