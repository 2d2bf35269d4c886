#include "kvmtool-gpu/kvm/kvm_system.h"

#include <cpuid.h>
#include <fcntl.h>
#include <sys/ioctl.h>

#include "kvmtool-gpu/kvm/cpuid_ioctls.h"
#include "kvmtool-gpu/kvm/kvm_error.h"
#include "kvmtool-gpu/kvm/vm_fd.h"

namespace kvmgpu {

namespace {
struct RequiredCap {
    long cap;
    const char* name;
};
constexpr RequiredCap kRequired[] = {
    {KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY"},
    {KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID"},
    {KVM_CAP_IOEVENTFD, "KVM_CAP_IOEVENTFD"},
    {KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT"},
};
} // namespace

KvmSystem::KvmSystem(const std::string& path) {
    fd_ = UniqueFd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd_) throw KvmError("open " + path, errno);
    const int version = check_ioctl(::ioctl(fd_.get(), KVM_GET_API_VERSION, 0), "KVM_GET_API_VERSION");
    if (version != KVM_API_VERSION)
        throw std::runtime_error("KVM API version " + std::to_string(version) + ", expected " +
                                 std::to_string(KVM_API_VERSION));
    for (const auto& req : kRequired)
        if (check_extension(req.cap) <= 0)
            throw std::runtime_error(std::string("host KVM lacks ") + req.name);
    vcpu_mmap_size_ = check_ioctl(::ioctl(fd_.get(), KVM_GET_VCPU_MMAP_SIZE, 0), "KVM_GET_VCPU_MMAP_SIZE");

    // The entry count is not known up front: grow until KVM stops saying E2BIG.
    for (uint32_t n = 64; n <= 4096; n *= 2) {
        CpuidBuffer cpuid(n);
        if (::ioctl(fd_.get(), kGetSupportedCpuid, cpuid.ioctl_arg()) == 0) {
            cpuid_.assign(cpuid.entries(), cpuid.entries() + cpuid.header()->nent);
            return;
        }
        if (errno != E2BIG) throw KvmError("KVM_GET_SUPPORTED_CPUID", errno);
    }
    throw std::runtime_error("KVM_GET_SUPPORTED_CPUID: more than 4096 entries");
}

int KvmSystem::check_extension(long cap) const { return ::ioctl(fd_.get(), KVM_CHECK_EXTENSION, cap); }

std::unique_ptr<VmFd> KvmSystem::create_vm() const {
    // Retry on EINTR: VM creation can be interrupted on a busy host.
    int vm;
    do vm = ::ioctl(fd_.get(), KVM_CREATE_VM, 0);
    while (vm < 0 && errno == EINTR);
    check_ioctl(vm, "KVM_CREATE_VM");
    return std::make_unique<VmFd>(UniqueFd(vm), *this);
}

bool KvmSystem::available(std::string* why) {
    const int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        if (why) *why = std::string("cannot open /dev/kvm: ") + std::strerror(errno);
        return false;
    }
    // Something else at that path (a bind mount, a stray file) is not KVM.
    const int version = ::ioctl(fd, KVM_GET_API_VERSION, 0);
    ::close(fd);
    if (version != KVM_API_VERSION) {
        if (why) *why = "/dev/kvm does not answer KVM_GET_API_VERSION with " + std::to_string(KVM_API_VERSION);
        return false;
    }
    return true;
}

bool KvmSystem::host_is_virtualized() {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    return (c >> 31) & 1u;
}

} // namespace kvmgpu
