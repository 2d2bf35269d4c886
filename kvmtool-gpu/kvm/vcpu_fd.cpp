#include "kvmtool-gpu/kvm/vcpu_fd.h"

#include <cstring>

#include <sys/ioctl.h>
#include <sys/mman.h>

#include <cinttypes>
#include <cstdio>

#include "kvmtool-gpu/kvm/cpuid_ioctls.h"
#include "kvmtool-gpu/kvm/kvm_error.h"

namespace kvmgpu {

VcpuFd::VcpuFd(UniqueFd fd, int mmap_size) : fd_(std::move(fd)), mmap_size_(mmap_size) {
    void* p = ::mmap(nullptr, mmap_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
    if (p == MAP_FAILED) throw KvmError("mmap(kvm_run)", errno);
    run_ = static_cast<kvm_run*>(p);
    // kvm_run holds this vCPU's registers as they cross exits: no process
    // the VMM forks (another VM's GPU worker) may map it.
    if (::madvise(p, mmap_size_, MADV_DONTFORK) != 0) {
        const int err = errno;
        ::munmap(p, mmap_size_);
        throw KvmError("madvise(kvm_run, MADV_DONTFORK)", err);
    }
}

VcpuFd::~VcpuFd() { ::munmap(run_, mmap_size_); }

kvm_regs VcpuFd::regs() const {
    kvm_regs r{};
    check_ioctl(::ioctl(fd_.get(), KVM_GET_REGS, &r), "KVM_GET_REGS");
    return r;
}
void VcpuFd::set_regs(const kvm_regs& r) { check_ioctl(::ioctl(fd_.get(), KVM_SET_REGS, &r), "KVM_SET_REGS"); }
kvm_sregs VcpuFd::sregs() const {
    kvm_sregs s{};
    check_ioctl(::ioctl(fd_.get(), KVM_GET_SREGS, &s), "KVM_GET_SREGS");
    return s;
}
void VcpuFd::set_sregs(const kvm_sregs& s) { check_ioctl(::ioctl(fd_.get(), KVM_SET_SREGS, &s), "KVM_SET_SREGS"); }

void VcpuFd::set_fpu(const kvm_fpu& f) { check_ioctl(::ioctl(fd_.get(), KVM_SET_FPU, &f), "KVM_SET_FPU"); }

kvm_fpu VcpuFd::fpu() const {
    kvm_fpu f{};
    check_ioctl(::ioctl(fd_.get(), KVM_GET_FPU, &f), "KVM_GET_FPU");
    return f;
}

void VcpuFd::set_xcr0(uint64_t xcr0) {
    kvm_xcrs x{};
    x.nr_xcrs = 1;
    x.xcrs[0].xcr = 0;
    x.xcrs[0].value = xcr0;
    check_ioctl(::ioctl(fd_.get(), KVM_SET_XCRS, &x), "KVM_SET_XCRS");
}

KvmXsaveArea VcpuFd::xsave() const {
    KvmXsaveArea x{};
    check_ioctl(::ioctl(fd_.get(), kGetXsave, &x), "KVM_GET_XSAVE");
    return x;
}

bool VcpuFd::set_xsave(const KvmXsaveArea& area) { return ::ioctl(fd_.get(), kSetXsave, &area) == 0; }

namespace {
// struct kvm_msrs as the kernel lays it out (an 8-byte header, then the
// entries): its C++ declaration has the flexible-array problem that
// cpuid_ioctls.h describes, which would also change the ioctl number.
struct MsrsHeader {
    uint32_t nmsrs, pad;
};
static_assert(sizeof(MsrsHeader) == 8);

std::vector<uint8_t> msrs_buffer(const std::vector<kvm_msr_entry>& entries) {
    std::vector<uint8_t> buf(sizeof(MsrsHeader) + entries.size() * sizeof(kvm_msr_entry));
    const MsrsHeader h{static_cast<uint32_t>(entries.size()), 0};
    std::memcpy(buf.data(), &h, sizeof h);
    std::memcpy(buf.data() + sizeof h, entries.data(), entries.size() * sizeof(kvm_msr_entry));
    return buf;
}
} // namespace

void VcpuFd::set_msrs(const std::vector<kvm_msr_entry>& entries) {
    constexpr unsigned long kSetMsrs = _IOW(KVMIO, 0x89, MsrsHeader);
    std::vector<uint8_t> buf = msrs_buffer(entries);
    const int set = check_ioctl(::ioctl(fd_.get(), kSetMsrs, buf.data()), "KVM_SET_MSRS");
    if (static_cast<size_t>(set) != entries.size())
        throw KvmError("KVM_SET_MSRS (took " + std::to_string(set) + " of " + std::to_string(entries.size()) + ")",
                       EINVAL);
}

std::optional<uint64_t> VcpuFd::msr(uint32_t index) const {
    constexpr unsigned long kGetMsrs = _IOWR(KVMIO, 0x88, MsrsHeader);
    std::vector<uint8_t> buf = msrs_buffer({kvm_msr_entry{index, 0, 0}});
    if (::ioctl(fd_.get(), kGetMsrs, buf.data()) != 1) return std::nullopt;
    kvm_msr_entry e;
    std::memcpy(&e, buf.data() + sizeof(MsrsHeader), sizeof e);
    return e.data;
}

void VcpuFd::set_cpuid(const std::vector<kvm_cpuid_entry2>& entries) {
    CpuidBuffer cpuid(static_cast<uint32_t>(entries.size()));
    std::copy(entries.begin(), entries.end(), cpuid.entries());
    check_ioctl(::ioctl(fd_.get(), kSetCpuid2, cpuid.ioctl_arg()), "KVM_SET_CPUID2");
}

uint64_t VcpuFd::tsc_khz() const {
    const int khz = ::ioctl(fd_.get(), KVM_GET_TSC_KHZ, 0);
    return khz > 0 ? static_cast<uint64_t>(khz) : 0;
}

UniqueFd VcpuFd::stats_fd() const {
#ifdef KVM_GET_STATS_FD
    return UniqueFd(::ioctl(fd_.get(), KVM_GET_STATS_FD, 0));
#else
    return UniqueFd();
#endif
}

VcpuExit VcpuFd::run() {
    if (::ioctl(fd_.get(), KVM_RUN, 0) < 0) {
        if (errno == EINTR || errno == EAGAIN) {
            __atomic_store_n(&run_->immediate_exit, 0, __ATOMIC_RELAXED);
            return exit::Interrupted{};
        }
        throw KvmError("KVM_RUN", errno);
    }
    auto* base = reinterpret_cast<uint8_t*>(run_);
    switch (run_->exit_reason) {
    case KVM_EXIT_IO: {
        // SAFETY: KVM guarantees data_offset + size*count lies inside the
        // kvm_run mapping it owns.
        const uint64_t bytes = uint64_t{run_->io.size} * run_->io.count;
        return exit::PortIo{run_->io.port, run_->io.size, run_->io.count, run_->io.direction == KVM_EXIT_IO_IN,
                            std::span<uint8_t>(base + run_->io.data_offset, bytes)};
    }
    case KVM_EXIT_MMIO:
        return exit::Mmio{run_->mmio.phys_addr, run_->mmio.len, run_->mmio.is_write != 0,
                          std::span<uint8_t>(run_->mmio.data, std::min<uint32_t>(run_->mmio.len, 8))};
    case KVM_EXIT_HLT: return exit::Halt{};
    case KVM_EXIT_SHUTDOWN: return exit::Shutdown{};
    case KVM_EXIT_FAIL_ENTRY:
        return exit::FailEntry{run_->fail_entry.hardware_entry_failure_reason, run_->fail_entry.cpu};
    case KVM_EXIT_INTERNAL_ERROR: return exit::InternalError{run_->internal.suberror};
    case KVM_EXIT_INTR: return exit::Interrupted{};
    case KVM_EXIT_SYSTEM_EVENT: return exit::SystemEvent{run_->system_event.type};
    default: return exit::Other{run_->exit_reason};
    }
}

std::string VcpuFd::dump_state() const {
    char buf[1024];
    kvm_regs r{};
    kvm_sregs s{};
    if (::ioctl(fd_.get(), KVM_GET_REGS, &r) < 0 || ::ioctl(fd_.get(), KVM_GET_SREGS, &s) < 0)
        return "  (registers unavailable)";
    std::snprintf(buf, sizeof buf,
                  "  rip=%016llx rsp=%016llx rflags=%08llx\n"
                  "  rax=%016llx rbx=%016llx rcx=%016llx rdx=%016llx\n"
                  "  rsi=%016llx rdi=%016llx rbp=%016llx r8 =%016llx\n"
                  "  cr0=%016llx cr2=%016llx cr3=%016llx cr4=%016llx efer=%llx\n"
                  "  cs=%04x(base %llx l=%u) ss=%04x ds=%04x gdt=%llx/%x idt=%llx/%x",
                  r.rip, r.rsp, r.rflags, r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp, r.r8, s.cr0, s.cr2,
                  s.cr3, s.cr4, s.efer, s.cs.selector, s.cs.base, s.cs.l, s.ss.selector, s.ds.selector, s.gdt.base,
                  s.gdt.limit, s.idt.base, s.idt.limit);
    return buf;
}

} // namespace kvmgpu
