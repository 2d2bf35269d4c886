// What a device on the bus sees: an offset inside its own range and the
// bytes of one access. Base addresses belong to the Bus, never the device.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace kvmgpu {

// A device model reachable by port I/O or MMIO. Called on vCPU threads:
// implementations lock what they share, and never throw on guest input.
class BusDevice {
public:
    virtual ~BusDevice() = default;
    virtual std::string_view name() const = 0;
    // `data` arrives zero-filled; fill what the register holds.
    virtual void read(uint64_t offset, std::span<uint8_t> data) = 0;
    virtual void write(uint64_t offset, std::span<const uint8_t> data) = 0;
};

} // namespace kvmgpu
