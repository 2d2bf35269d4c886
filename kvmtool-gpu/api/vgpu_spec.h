// The API's VgpuSpec as the VMM's VgpuConfig (vmm/vgpu_attach.h), and the
// GpuSharing handle's insides. The CLI's vGPU flags fill a VgpuSpec and
// every command turns it into a VgpuConfig here, so the two never disagree.
#pragma once

#include <memory>

#include "kvmgpu/kvmgpu.hpp"
#include "kvmtool-gpu/vmm/gpu_share.h"
#include "kvmtool-gpu/vmm/vgpu_attach.h"

namespace kvmgpu {

struct GpuSharing::Impl {
    std::shared_ptr<GpuShare> share;
};

namespace api {

// Checks every field (Error, one line naming it). An unset device_mem_quota
// is the whole GPU when this process runs one VM (set_vms_in_process), else
// VgpuOptions' per-VM default. cublas_path is set for the whole process here.
VgpuConfig to_vgpu_config(const VgpuSpec& spec);

} // namespace api
} // namespace kvmgpu
