// One KVM virtual machine fd: its memory slots, ioeventfds, statistics fd,
// and the factory for its vCPUs.
#pragma once

#include <cstdint>
#include <memory>

#include "kvmtool-gpu/kvm/unique_fd.h"

namespace kvmgpu {

class KvmSystem;
class VcpuFd;

class VmFd {
public:
    VmFd(UniqueFd fd, const KvmSystem& kvm) : fd_(std::move(fd)), kvm_(kvm) {}

    int fd() const { return fd_.get(); }
    const KvmSystem& kvm() const { return kvm_; }

    // KVM_SET_USER_MEMORY_REGION: guest [gpa, gpa+size) is host [host, host+size).
    void set_user_memory_region(uint32_t slot, uint64_t gpa, uint64_t size, void* host);
    // The same without throwing, with KVM_MEM_* flags (KVM_MEM_READONLY):
    // 0 or the errno. Size 0 deletes the slot.
    int set_memory_slot(uint32_t slot, uint64_t gpa, uint64_t size, void* host, uint32_t flags) noexcept;
    // KVM_IOEVENTFD: a guest write of `len` bytes at `addr` signals `eventfd`
    // without leaving the kernel (any value). mmio false: port I/O. It stays
    // until the VM fd closes (KVM drops a VM's ioeventfds with it).
    void add_ioeventfd(uint64_t addr, uint32_t len, int eventfd, bool mmio);
    // KVM_GET_STATS_FD for the VM, or an invalid fd when the kernel lacks it.
    UniqueFd stats_fd() const;

    std::unique_ptr<VcpuFd> create_vcpu(uint32_t id) const;

private:
    UniqueFd fd_;
    const KvmSystem& kvm_;
};

} // namespace kvmgpu
