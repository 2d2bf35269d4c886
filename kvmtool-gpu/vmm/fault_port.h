// The fault port (KVMGPU_FAULT_PORT): the VMM's exception stubs write the
// vector of an exception the guest could not handle, and its vcpu_write
// ends the run with the fault described from that vCPU's registers
// (guest_fault.h). For a Linux-ABI guest whose ring-3 code faulted and
// handles the signal Linux would send, the handler starts on that vCPU
// instead and the run goes on. Only an aligned 4-byte write counts.
#pragma once

#include "kvmtool-gpu/bus/bus_device.h"
#include "kvmtool-gpu/vmm/linux/linux_process.h"
#include "memmap/guest_memory.h"

namespace kvmgpu {

class FaultPort : public BusDevice {
public:
    // `linux`: the Linux-ABI process, or nullptr for a project image.
    FaultPort(const memmap::GuestMemory& memory, linux_abi::LinuxProcess* linux) : memory_(memory), linux_(linux) {}
    std::string_view name() const override { return "fault-port"; }
    // Without a vCPU there is no fault to describe: ignored (reads give zeros).
    void read(uint64_t, std::span<uint8_t>) override {}
    void write(uint64_t, std::span<const uint8_t>) override {}
    void vcpu_write(uint64_t offset, std::span<const uint8_t> data, VcpuContext& ctx) override;

private:
    const memmap::GuestMemory& memory_;
    linux_abi::LinuxProcess* linux_;
};

} // namespace kvmgpu
