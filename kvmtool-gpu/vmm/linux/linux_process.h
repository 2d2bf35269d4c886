// A Linux-ABI guest in a VM: lays out its RAM (program, brk and mmap
// area, guard, stack), loads the executable, builds the start-up stack and
// the vCPU state (ring 3 at the entry, LSTAR at the VMM's stub), and serves
// each `syscall` that reaches the stub's port. Owned by VirtualMachine.
#pragma once

#include <linux/kvm.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvmtool-gpu/kvm/vcpu_fd.h"
#include "kvmtool-gpu/vmm/boot_state.h"
#include "kvmtool-gpu/vmm/linux/guest_clock.h"
#include "kvmtool-gpu/vmm/linux/linux_elf.h"
#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

struct LinuxGuestOptions {
    std::vector<std::string> args;  // argv[1..]
    std::vector<std::string> env;   // "K=V", after the defaults HOME=/ PATH=/ TERM=dumb
    std::string share_dir;          // empty: no files
    bool share_read_only = false;
    bool sync_regs = true;          // exchange registers through kvm_run where KVM can (--no-sync-regs: ioctls)
    bool vdso = true;               // clocks without a system call (--no-vdso: every clock read is one)
};

// Where things go in a guest of `ram` bytes: stack at the top (8 MiB, 2 MiB
// below 64 MiB of RAM), a 2 MiB unmapped guard under it, the program and
// the brk/mmap area below that.
struct RamPlan {
    uint64_t stack_lo, stack_top, guard_lo, image_limit;
};
RamPlan plan_ram(uint64_t ram);

class LinuxProcess {
public:
    // Loads and lays out everything in guest RAM (the boot structures too,
    // from `boot`); throws ImageError / std::invalid_argument /
    // std::runtime_error (--share) with one line.
    LinuxProcess(const ImageSource& image, const memmap::GuestMemory& mem, const std::string& exe_path,
                 const LinuxGuestOptions& opts, BootParams boot, uint64_t hwcap,
                 std::function<void(std::string_view)> console_text);

    // Registers and MSRs for the first KVM_RUN; `sync_regs`: KVM offers
    // KVM_CAP_SYNC_REGS, so system calls exchange registers without ioctls.
    // Starts the vDSO's clock from the vCPU's TSC.
    void prepare_vcpu(VcpuFd& vcpu, bool sync_regs);

    // A write to KVMGPU_LINUX_SYSCALL_PORT: serves the call if it came from
    // the stub (nullopt otherwise: a stray port write from ring 3) and puts
    // the vCPU back in ring 3 after the `syscall`.
    std::optional<SyscallOutcome> on_port_write(VcpuFd& vcpu);

    const LinuxImage& image() const { return image_; }
    const SyscallServer& server() const { return *server_; }
    SyscallServer& server() { return *server_; }

    // The vDSO's clock (nullopt: no vDSO, or no usable TSC).
    const std::optional<GuestClock>& clock() const { return clock_; }

private:
    void write_vvar();

    const memmap::GuestMemory& mem_;
    bool vdso_ = false;
    std::optional<GuestClock> clock_;
    uint32_t vvar_seq_ = 0;
    LinuxImage image_;
    uint64_t sp_ = 0;
    bool sync_regs_ = false;
    std::unique_ptr<SyscallServer> server_;
};

} // namespace kvmgpu::linux_abi
