// Picks the GPU backend for one VM: the CUDA backend where a driver and a
// GPU are present, the host backend otherwise (or when forced), always
// saying which one it picked and why.
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

// Auto: CUDA if it can be created, else the host backend, with *why saying
// why CUDA was not used. Cuda: nullptr (and *why) if it cannot be created.
// Host: the host backend. On success *why names the backend picked.
std::unique_ptr<GpuBackend> make_backend(BackendChoice choice, std::string* why, int cuda_ordinal = 0);

} // namespace kvmgpu::vgpu
