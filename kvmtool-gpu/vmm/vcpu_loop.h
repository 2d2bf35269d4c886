// The run loop every vCPU thread of a VM runs, the first and a Linux-ABI
// guest's further threads alike: KVM_RUN, then each exit to its handler
// until the thread exits or the guest's run ends (group_exit.h). Port I/O
// and MMIO go to the buses with the vCPU that made them (vcpu_context.h),
// so the devices that act on a vCPU (the Linux system-call port, the fault
// port) are devices like the others. Before the bus, a Linux-ABI guest's
// port I/O is checked (it has no ports but the stubs') and its MMIO in the
// file window is the process's (file_window.h). After an MMIO write the
// loop carries out the CPU-control request it made (cpu_control.h).
#pragma once

#include "kvmtool-gpu/bus/bus.h"
#include "kvmtool-gpu/devices/cpu_control.h"
#include "kvmtool-gpu/devices/exit_device.h"
#include "kvmtool-gpu/kvm/vcpu_exit.h"
#include "kvmtool-gpu/vmm/execution_mode.h"
#include "kvmtool-gpu/vmm/group_exit.h"
#include "kvmtool-gpu/vmm/linux/linux_process.h"
#include "kvmtool-gpu/vmm/vcpu_context.h"
#include "memmap/guest_memory.h"

namespace kvmgpu {

class VcpuLoop {
public:
    // What every vCPU of one VM shares; all of it outlives the loop's runs.
    struct Env {
        Bus& pio;
        Bus& mmio;
        const memmap::GuestMemory& memory;
        GroupExit& group;
        const ExitDevice& exit_port; // written: the guest's run ends with its code
        CpuControl& cpu_control;
        ExecutionProbe& execution;       // the calibration window, on the first vCPU
        linux_abi::LinuxProcess* linux;  // nullptr for a project image
    };
    explicit VcpuLoop(Env env) : env_(env) {}

    // Runs `ctx`'s vCPU on the calling thread until its thread exits
    // (ctx.exit_code()) or the group ends; an end this vCPU's exit made is
    // reported to the group first. Never throws.
    void run(VcpuContext& ctx) const;

private:
    void handle(VcpuContext& ctx, VcpuExit& ex) const;
    void port_io(VcpuContext& ctx, exit::PortIo& io) const;
    void mmio(VcpuContext& ctx, exit::Mmio& m) const;
    // Carries out a CPU-control request on the vCPU whose exit made it; "" or why it was refused.
    std::string serve(VcpuContext& ctx, const CpuRequest& request) const;
    std::string load_cr3(VcpuFd& vcpu, uint64_t root) const;
    // KVM_EXIT_SHUTDOWN: the one line (guest_fault.h) and the thread's last system call.
    std::string describe_shutdown(VcpuContext& ctx) const;

    Env env_;
};

} // namespace kvmgpu
