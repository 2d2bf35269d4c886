// Picks the GPU backend for one VM: the CUDA backend where a driver and a
// GPU are present, the host backend otherwise (or when forced), always
// saying which one it picked and why. The CUDA backend runs in a GPU worker
// process of its own (RemoteBackend) unless asked to run inline.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

enum class BackendChoice { Auto, Cuda, Host };

// "auto", "cuda", "host" (any case); false for anything else.
bool parse_backend_choice(std::string_view s, BackendChoice* out);
const char* to_string(BackendChoice c);

// Where the CUDA backend runs. Process: in a forked worker per VM, so a
// sticky GPU fault is recovered by replacing the worker and the VMM process
// never loads libcuda (the probe for a GPU runs in that worker too).
// Inline: in the VMM process, where a sticky fault ends CUDA for good. The
// host backend always runs inline.
enum class GpuWorker { Process, Inline };
// "process", "inline" (any case); false for anything else.
bool parse_gpu_worker(std::string_view s, GpuWorker* out);
const char* to_string(GpuWorker w);

// Auto: CUDA if it can be created, else the host backend, with *why saying
// why CUDA was not used. Cuda: nullptr (and *why) if it cannot be created.
// Host: the host backend. On success *why names the backend picked.
std::unique_ptr<GpuBackend> make_backend(BackendChoice choice, std::string* why, int cuda_ordinal = 0,
                                         GpuWorker worker = GpuWorker::Process);

} // namespace kvmgpu::vgpu
