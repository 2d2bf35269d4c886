// What actually executes guest instructions under this /dev/kvm, for
// result tables that must not pretend: hardware VMX or SVM, or kvm-pvm
// (pagetable-based KVM, which runs non-PVM guests through the instruction
// emulator), and what hypervisor, if any, this host itself runs under.
#pragma once

#include <string>

namespace kvmgpu {

struct KvmFlavor {
    std::string engine;          // "vmx", "svm", "pvm", or "unknown"
    std::string host_hypervisor; // CPUID 0x40000000 signature: "KVMKVMKVM", "TCGTCGTCGTCG", "" on bare metal
    bool nested = false;         // this host is itself a VM
    bool guest_code_emulated = false; // true for pvm, and for a host that is itself TCG-emulated
    std::string describe() const; // one line for logs and result tables
};

KvmFlavor detect_kvm_flavor();

} // namespace kvmgpu
