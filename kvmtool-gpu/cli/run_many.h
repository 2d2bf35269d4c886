// `kvmtool-gpu run --vms N`: N guests at once in this process, each a VM of
// its own with its own vGPU (its own GPU worker process and context, quotas
// and doorbell), sharing the GPU. Each guest's console lines carry its
// number; a guest's fault or failure ends only its own run. A writable
// --share gives each VM its own subdirectory (cli/vm_share.h).
#pragma once

#include "kvmgpu/kvmgpu.hpp"

namespace kvmgpu::cli {

// Boots `vms` guests from `c` (seeds c.seed, c.seed + 1, ...; unset: 1, 2,
// ...), runs them concurrently through the embedding API, prints each one's
// result and a summary line. Returns 0 when every guest passed, else 1.
// Throws kvmgpu::Error for set-up failures.
int run_many(const VmConfig& c, unsigned vms);

} // namespace kvmgpu::cli
