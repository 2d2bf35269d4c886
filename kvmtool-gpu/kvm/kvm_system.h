// /dev/kvm: the API version, capabilities and CPUID the host KVM offers.
// The first object made and the factory for VMs.
#pragma once

#include <linux/kvm.h>

#include <memory>
#include <string>
#include <vector>

#include "kvmtool-gpu/kvm/unique_fd.h"

namespace kvmgpu {

class VmFd;

class KvmSystem {
public:
    // Opens /dev/kvm (or `path`) and checks the API version and the
    // capabilities the VMM relies on. Throws KvmError with a one-line reason
    // ("open /dev/kvm failed: No such file or directory ...").
    explicit KvmSystem(const std::string& path = "/dev/kvm");

    int fd() const { return fd_.get(); }
    int check_extension(long cap) const;
    int vcpu_mmap_size() const { return vcpu_mmap_size_; }
    // KVM_GET_SUPPORTED_CPUID, fetched once.
    const std::vector<kvm_cpuid_entry2>& supported_cpuid() const { return cpuid_; }
    std::unique_ptr<VmFd> create_vm() const;

    // True when /dev/kvm exists and can be opened (for tests that skip).
    static bool available(std::string* why = nullptr);
    // True when this host itself runs under a hypervisor (CPUID.1:ECX[31]):
    // KVM here is then nested, and result tables must say so.
    static bool host_is_virtualized();

private:
    UniqueFd fd_;
    int vcpu_mmap_size_ = 0;
    std::vector<kvm_cpuid_entry2> cpuid_;
};

} // namespace kvmgpu
