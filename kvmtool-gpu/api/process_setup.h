// The process-wide side of the embedding API: how many Machines share this
// process (set_vms_in_process), and the one /dev/kvm they all use.
#pragma once

#include <memory>

#include "kvmtool-gpu/kvm/kvm_system.h"

namespace kvmgpu::api {

unsigned vms_in_process();
// Opened by the first Machine and kept for the process (a KvmSystem is
// read-only once made, so Machines on any thread share it). Throws like
// open_kvm().
std::shared_ptr<const KvmSystem> shared_kvm();

} // namespace kvmgpu::api
