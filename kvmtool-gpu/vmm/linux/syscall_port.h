// The Linux system-call port (KVMGPU_LINUX_SYSCALL_PORT, docs/runtime-api.md
// "System calls") as a device on the port bus: the VMM's ring-0 stub writes
// it at each `syscall`; its vcpu_write serves the call on the vCPU that made
// it (registers through kvm_run where KVM_CAP_SYNC_REGS is on, no ioctl) and
// returns that vCPU to ring 3, or ends the thread or the run. A write from
// anywhere but the stub ends the run. Safe from every vCPU thread at once.
#pragma once

#include "kvmtool-gpu/bus/bus_device.h"
#include "kvmtool-gpu/vmm/linux/linux_process.h"

namespace kvmgpu::linux_abi {

class SyscallPort : public BusDevice {
public:
    explicit SyscallPort(LinuxProcess& process) : process_(process) {}
    std::string_view name() const override { return "linux-syscall-port"; }
    // Without a vCPU there is no call to serve: ignored (reads give zeros).
    void read(uint64_t, std::span<uint8_t>) override {}
    void write(uint64_t, std::span<const uint8_t>) override {}
    void vcpu_write(uint64_t offset, std::span<const uint8_t> data, VcpuContext& ctx) override;

private:
    LinuxProcess& process_;
};

} // namespace kvmgpu::linux_abi
