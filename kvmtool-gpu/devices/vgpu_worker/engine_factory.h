// Makes the command engine for one VM: picks the backend (make_backend's
// rules) and where it runs, and says which and why in one line.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu/command_engine.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::vgpu {

class MpsServerGroup; // mps_server_group.h

// Where the CUDA backend runs. Process: in a forked worker per VM, so a
// sticky GPU fault is recovered by replacing the worker and the VMM process
// never loads libcuda (the probe for a GPU runs in that worker too).
// Inline: in the VMM process, where a sticky fault ends CUDA for good. The
// host backend runs inline, unless Always: a worker process for any
// backend, the host backend included (tests of the worker's ring on a
// machine without a GPU).
enum class GpuWorker { Process, Inline, Always };
// "process", "inline", "always" (any case); false for anything else.
bool parse_gpu_worker(std::string_view s, GpuWorker* out);
const char* to_string(GpuWorker w);

// Whether this process has loaded libcuda: a child forked after its parent
// initialised CUDA cannot use CUDA, so a GPU worker would then be no use.
bool libcuda_loaded_here();

// nullptr with *why when `choice` is Cuda and no CUDA backend can be made
// (Auto falls back to the host backend and says why). A GPU worker starts
// its backend in the background (WorkerEngine), so *why then says it is
// starting; a CUDA start that fails there (Cuda: after the check for the
// driver's device node passed) shows in the engine's start() and fails the
// guest's commands, and Auto falls back to the host backend in the worker.
// Throws std::invalid_argument for bad options. `mem` must be complete (a
// worker is forked with it mapped) and outlive the engine. `mps`: the GPU
// worker is a client of that group's MPS server (no effect inline).
std::unique_ptr<CommandEngine> make_engine(const memmap::GuestMemory& mem, const VgpuOptions& opts,
                                           BackendChoice choice, GpuWorker worker, std::string* why,
                                           std::span<const int> gpus = kDefaultGpus,
                                           std::shared_ptr<MpsServerGroup> mps = nullptr);

} // namespace kvmgpu::vgpu
