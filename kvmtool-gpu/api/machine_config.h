// The API's VmConfig as the VMM's VmOptions and VgpuConfig, checked before
// anything touches /dev/kvm: a bad configuration is one Error line naming
// the field, on any host.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kvmgpu/kvmgpu.hpp"
#include "kvmtool-gpu/vmm/vgpu_attach.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::api {

struct CheckedConfig {
    VmOptions options;
    std::optional<VgpuConfig> vgpu;
    std::string libcuda;            // which libcuda the guest gets, for MachineSummary
    std::vector<std::string> notes; // e.g. a descriptor table the open-file limit lowered
};

// Throws Error.
CheckedConfig check_config(VmConfig config);

} // namespace kvmgpu::api
