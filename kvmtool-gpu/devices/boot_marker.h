// Records when the guest reaches each boot stage (an 8-byte MMIO write of
// the stage number), in nanoseconds since the VM's creation began.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "kvmtool-gpu/bus/bus_device.h"

namespace kvmgpu {

class BootMarker : public BusDevice {
public:
    static constexpr uint32_t kStages = 8;
    explicit BootMarker(std::chrono::steady_clock::time_point t0) : t0_(t0) {}

    std::string_view name() const override { return "boot-marker"; }
    void read(uint64_t, std::span<uint8_t>) override {}
    void write(uint64_t offset, std::span<const uint8_t> data) override;

    // Nanoseconds from t0 to the first time `stage` was marked; 0 if never.
    uint64_t stage_ns(uint32_t stage) const {
        return stage < kStages ? stage_ns_[stage].load(std::memory_order_relaxed) : 0;
    }

private:
    std::chrono::steady_clock::time_point t0_;
    std::array<std::atomic<uint64_t>, kStages> stage_ns_{};
};

} // namespace kvmgpu
