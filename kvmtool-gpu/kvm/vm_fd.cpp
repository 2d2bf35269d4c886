#include "kvmtool-gpu/kvm/vm_fd.h"

#include <linux/kvm.h>
#include <sys/ioctl.h>

#include <cerrno>

#include "kvmtool-gpu/kvm/kvm_error.h"
#include "kvmtool-gpu/kvm/kvm_system.h"
#include "kvmtool-gpu/kvm/vcpu_fd.h"

namespace kvmgpu {

void VmFd::set_user_memory_region(uint32_t slot, uint64_t gpa, uint64_t size, void* host) {
    kvm_userspace_memory_region region{};
    region.slot = slot;
    region.guest_phys_addr = gpa;
    region.memory_size = size;
    region.userspace_addr = reinterpret_cast<uint64_t>(host);
    check_ioctl(::ioctl(fd_.get(), KVM_SET_USER_MEMORY_REGION, &region), "KVM_SET_USER_MEMORY_REGION");
}

int VmFd::set_memory_slot(uint32_t slot, uint64_t gpa, uint64_t size, void* host, uint32_t flags) noexcept {
    kvm_userspace_memory_region region{};
    region.slot = slot;
    region.flags = flags;
    region.guest_phys_addr = gpa;
    region.memory_size = size;
    region.userspace_addr = reinterpret_cast<uint64_t>(host);
    return ::ioctl(fd_.get(), KVM_SET_USER_MEMORY_REGION, &region) == 0 ? 0 : errno;
}

namespace {
kvm_ioeventfd make_ioeventfd(uint64_t addr, uint32_t len, int eventfd, bool mmio) {
    kvm_ioeventfd io{};
    io.addr = addr;
    io.len = len;
    io.fd = eventfd;
    io.flags = mmio ? 0 : KVM_IOEVENTFD_FLAG_PIO;
    return io;
}
} // namespace

void VmFd::add_ioeventfd(uint64_t addr, uint32_t len, int eventfd, bool mmio) {
    auto io = make_ioeventfd(addr, len, eventfd, mmio);
    check_ioctl(::ioctl(fd_.get(), KVM_IOEVENTFD, &io), "KVM_IOEVENTFD");
}

UniqueFd VmFd::stats_fd() const {
#ifdef KVM_GET_STATS_FD
    if (kvm_.check_extension(KVM_CAP_BINARY_STATS_FD) > 0) return UniqueFd(::ioctl(fd_.get(), KVM_GET_STATS_FD, 0));
#endif
    return UniqueFd();
}

std::unique_ptr<VcpuFd> VmFd::create_vcpu(uint32_t id) const {
    const int fd = check_ioctl(::ioctl(fd_.get(), KVM_CREATE_VCPU, id), "KVM_CREATE_VCPU");
    return std::make_unique<VcpuFd>(UniqueFd(fd), kvm_.vcpu_mmap_size());
}

} // namespace kvmgpu
