// Opens /dev/kvm for a CLI command; a host without KVM gets one line that
// says how to run on the real KVM path anyway (nested, under QEMU).
#pragma once

#include "kvmtool-gpu/kvm/kvm_system.h"

namespace kvmgpu::cli {
KvmSystem open_kvm();
}
