#include "kvmtool-gpu/kvm/open_kvm.h"

#include <stdexcept>

#include "kvmtool-gpu/kvm/kvm_error.h"

namespace kvmgpu {

KvmSystem open_kvm() {
    try {
        return KvmSystem();
    } catch (const KvmError& e) {
        if (e.error_number() == ENOENT)
            throw std::runtime_error(std::string(e.what()) +
                                     "; this host has no KVM: kvmtool-gpu/scripts/main.sh runs the VMM inside a "
                                     "QEMU machine with nested KVM instead");
        if (e.error_number() == EACCES)
            throw std::runtime_error(std::string(e.what()) + "; add yourself to the kvm group or run as root");
        throw;
    }
}

} // namespace kvmgpu
