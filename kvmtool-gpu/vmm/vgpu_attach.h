// Puts a vGPU into a VirtualMachine: picks the backend (saying which and
// why), claims the register block on the MMIO bus, wires the doorbell
// (ioeventfd when asked) and starts the executor.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/vgpu_device.h"
#include "kvmtool-gpu/devices/vgpu_worker/engine_factory.h"
#include "kvmtool-gpu/remote/remote_engine.h"
#include "kvmtool-gpu/vmm/gpu_share.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu {

struct VgpuConfig {
    vgpu::BackendChoice backend = vgpu::BackendChoice::Auto;
    vgpu::GpuWorker worker = vgpu::GpuWorker::Process; // where a CUDA backend runs
    vgpu::VgpuOptions options;
    // The physical GPU of each of the guest's devices (--gpus).
    std::vector<int> gpus = {0};
    // --gpu-share: nullptr or contexts for a context per worker; mps makes
    // every worker of the run a client of one MPS server.
    std::shared_ptr<GpuShare> share;
    // Set: the commands run on that GPU server (remote/remote_engine.h).
    std::optional<remote::RemoteTarget> remote;
};

struct AttachedVgpu {
    std::shared_ptr<vgpu::VgpuDevice> device;
    std::string backend_note; // one line: which backend, and why
};

// Throws std::runtime_error (one line) when the backend asked for cannot be
// had (e.g. --vgpu cuda without a GPU) or a KVM call fails.
AttachedVgpu attach_vgpu(VirtualMachine& vm, const VgpuConfig& cfg);

} // namespace kvmgpu
