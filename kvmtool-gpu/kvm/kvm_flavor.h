// Which KVM this /dev/kvm is, for result tables that must not pretend:
// hardware VMX or SVM, or kvm-pvm (pagetable-based KVM: ring-3 guest code
// runs natively, ring-0 code through KVM's instruction emulator), and what
// hypervisor, if any, this host itself runs under. Whether a given guest's
// code ran natively is measured per run (vmm/execution_mode.h), not derived
// from this.
#pragma once

#include <string>

namespace kvmgpu {

struct KvmFlavor {
    std::string engine;          // "vmx", "svm", "pvm", or "unknown"
    std::string host_hypervisor; // CPUID 0x40000000 signature: "KVMKVMKVM", "TCGTCGTCGTCG", "" on bare metal
    bool nested = false;         // this host is itself a VM
    bool host_emulated = false;  // this host itself runs under TCG: everything, native code included, is emulated
    std::string describe() const; // one line for logs and result tables
};

KvmFlavor detect_kvm_flavor();

} // namespace kvmgpu
