// Opens /dev/kvm for a command or a study; a host without KVM gets one line
// that says how to run on the real KVM path anyway (nested, under QEMU).
#pragma once

#include "kvmtool-gpu/kvm/kvm_system.h"

namespace kvmgpu {
KvmSystem open_kvm();
}
