// One vCPU fd and its shared kvm_run page: registers in and out, and run()
// that returns each exit as a VcpuExit.
#pragma once

#include <linux/kvm.h>

#include <optional>
#include <string>
#include <vector>

#include "kvmtool-gpu/kvm/unique_fd.h"
#include "kvmtool-gpu/kvm/vcpu_exit.h"
#include "kvmtool-gpu/kvm/xsave_ioctls.h"

namespace kvmgpu {

class VcpuFd {
public:
    VcpuFd(UniqueFd fd, int mmap_size);
    ~VcpuFd();
    VcpuFd(const VcpuFd&) = delete;
    VcpuFd& operator=(const VcpuFd&) = delete;

    int fd() const { return fd_.get(); }

    kvm_regs regs() const;
    void set_regs(const kvm_regs& r);
    kvm_sregs sregs() const;
    void set_sregs(const kvm_sregs& s);
    void set_fpu(const kvm_fpu& f);
    kvm_fpu fpu() const;
    // KVM_SET_XCRS with XCR0 alone (KVM_CAP_XCRS); throws KvmError where KVM refuses it.
    void set_xcr0(uint64_t xcr0);
    // KVM_GET_XSAVE: the XSAVE area in standard form (KVM_CAP_XSAVE).
    KvmXsaveArea xsave() const;
    // KVM_SET_XSAVE; false (errno set) where KVM refuses the area.
    bool set_xsave(const KvmXsaveArea& area);
    // KVM_SET_MSRS; throws KvmError unless KVM took every entry.
    void set_msrs(const std::vector<kvm_msr_entry>& entries);
    // KVM_GET_MSRS of one MSR; nullopt where KVM does not read it.
    std::optional<uint64_t> msr(uint32_t index) const;
    void set_cpuid(const std::vector<kvm_cpuid_entry2>& entries);
    // KVM_GET_TSC_KHZ, 0 when unknown.
    uint64_t tsc_khz() const;
    UniqueFd stats_fd() const;

    // One KVM_RUN. Returns Interrupted on EINTR (a watchdog's signal);
    // throws KvmError for any other failure of the ioctl itself.
    VcpuExit run();
    // Makes the next or current KVM_RUN return at once (safe from another
    // thread together with a signal to this vCPU's thread).
    // Atomic: the watchdog's thread and the vCPU thread both write it (a
    // data race ThreadSanitizer reported when it was a plain store).
    void request_immediate_exit() { __atomic_store_n(&run_->immediate_exit, 1, __ATOMIC_RELEASE); }

    // KVM_CAP_SYNC_REGS: KVM copies the registers and segment state into
    // the kvm_run page at every exit and takes back what is marked dirty at
    // the next KVM_RUN, saving the GET/SET ioctls on a hot exit (a Linux-ABI
    // guest's system call). Call enable_sync_regs() once, where KVM offers
    // it (the caller checks KVM_CAP_SYNC_REGS); then synced() after an exit.
    void enable_sync_regs() { run_->kvm_valid_regs = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS; }
    bool sync_regs_enabled() const { return run_->kvm_valid_regs != 0; }
    kvm_sync_regs& synced() { return run_->s.regs; }
    void mark_synced_dirty(uint64_t bits) { run_->kvm_dirty_regs |= bits; }
    // Drops what was marked: state set by ioctl afterwards stays as set.
    void clear_synced_dirty() { run_->kvm_dirty_regs = 0; }

    // Registers and segment state, several lines, for unexpected exits.
    std::string dump_state() const;

private:
    UniqueFd fd_;
    kvm_run* run_;
    int mmap_size_;
};

} // namespace kvmgpu
