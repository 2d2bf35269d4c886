// Picks the GPU backend for one VM, in this process: the CUDA backend where
// a driver and a GPU are present, the host backend otherwise (or when
// forced), always saying which one it picked and why. Where the backend
// runs (here, or in a GPU worker process) is make_engine's choice
// (devices/vgpu_worker/engine_factory.h).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"

namespace kvmgpu::vgpu {

enum class BackendChoice { Auto, Cuda, Host };

// "auto", "cuda", "host" (any case); false for anything else.
bool parse_backend_choice(std::string_view s, BackendChoice* out);
const char* to_string(BackendChoice c);

// The GPUs a VM's devices are on: device i of the guest is physical GPU
// gpus[i] (an ordinal may repeat: several devices, each with its own
// context, on one GPU): one backend each.
inline constexpr int kDefaultGpus[] = {0};

// Auto: CUDA if it can be created, else the host backend, with *why saying
// why CUDA was not used. Cuda: nullptr (and *why) if it cannot be created.
// Host: the host backend. On success *why names the backend picked; on
// failure the result is empty (false).
DeviceBackends make_backend(BackendChoice choice, std::string* why,
                                         std::span<const int> gpus = kDefaultGpus);
// The host backend in place of CUDA, which could not be made for `reason`
// (Auto's fallback), one device per entry of gpus; *why says so.
DeviceBackends host_instead_of_cuda(const std::string& reason, std::string* why,
                                                 std::span<const int> gpus = kDefaultGpus);
// The CUDA backend alone: empty with *why when it cannot be made.
DeviceBackends make_cuda_backend(std::span<const int> gpus, std::string* why);

// One host backend, offering the CPU references of cuBLAS, cuRAND and
// cuFFT (blas/, rand/, fft/) over its memory.
std::unique_ptr<HostBackend> make_host_backend(HostBackendOptions opts = {});

} // namespace kvmgpu::vgpu
