// The port the guest writes to end its run: a 4-byte exit code, 0 = its own
// checks passed. The run loop polls requested() after each port exit.
#pragma once

#include <atomic>
#include <cstdint>

#include "kvmtool-gpu/bus/bus_device.h"

namespace kvmgpu {

class ExitDevice : public BusDevice {
public:
    std::string_view name() const override { return "exit-port"; }
    void read(uint64_t, std::span<uint8_t>) override {}
    void write(uint64_t offset, std::span<const uint8_t> data) override;

    bool requested() const { return requested_.load(std::memory_order_acquire); }
    uint32_t code() const { return code_.load(std::memory_order_relaxed); }

private:
    std::atomic<bool> requested_{false};
    std::atomic<uint32_t> code_{0};
};

} // namespace kvmgpu
