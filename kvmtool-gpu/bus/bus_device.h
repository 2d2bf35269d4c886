// What a device on the bus sees: an offset inside its own range and the
// bytes of one access. Base addresses belong to the Bus, never the device.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace kvmgpu {

class VcpuContext; // the vCPU whose exit made an access (vmm/vcpu_context.h)

// A device model reachable by port I/O or MMIO. Called on vCPU threads:
// implementations lock what they share, and never throw on guest input.
class BusDevice {
public:
    virtual ~BusDevice() = default;
    virtual std::string_view name() const = 0;
    // `data` arrives zero-filled; fill what the register holds.
    virtual void read(uint64_t offset, std::span<uint8_t> data) = 0;
    virtual void write(uint64_t offset, std::span<const uint8_t> data) = 0;
    // The same access from the vCPU loop, with the vCPU that made it: a
    // device that acts on that vCPU (its registers) or ends its run
    // overrides these; the others see the plain access.
    virtual void vcpu_read(uint64_t offset, std::span<uint8_t> data, VcpuContext&) { read(offset, data); }
    virtual void vcpu_write(uint64_t offset, std::span<const uint8_t> data, VcpuContext&) { write(offset, data); }
};

} // namespace kvmgpu
