// `kvmtool-gpu run --vms N`: N guests at once in this process, each a VM of
// its own with its own vGPU (its own GPU worker process and context, quotas
// and doorbell), sharing the GPU. Each guest's console lines carry its
// number; a guest's fault or failure ends only its own run. A writable
// --share gives each VM its own subdirectory (cli/vm_share.h).
#pragma once

#include <optional>

#include "kvmtool-gpu/kvm/kvm_system.h"
#include "kvmtool-gpu/vmm/vgpu_attach.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace kvmgpu::cli {

// Boots `vms` guests from `o` (seeds o.seed, o.seed + 1, ...), runs them
// concurrently, prints each one's result and a summary line. Returns 0 when
// every guest passed, else 1. Throws what VirtualMachine and attach_vgpu
// throw for set-up failures.
int run_many(const KvmSystem& kvm, const VmOptions& o, const std::optional<VgpuConfig>& vgpu, unsigned vms);

} // namespace kvmgpu::cli
