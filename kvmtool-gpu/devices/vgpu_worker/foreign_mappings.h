// Whether this process maps memory of a VM that is not its own, read from
// /proc/self/maps: what a GPU worker checks before it makes its backend.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "memmap/fork_sharing.h"

namespace kvmgpu::vgpu {

// The first mapping in this process that holds a VM's memory or vCPU state
// (guest RAM, a worker channel, vGPU counters, a kvm_run page) and lies
// outside `own`, described in one line; nullopt if there is none. A GPU
// worker checks this before it makes its backend: it must hold its own VM
// and nothing of any other.
std::optional<std::string> foreign_vm_mapping(std::span<const memmap::ForkShare> own);

} // namespace kvmgpu::vgpu
