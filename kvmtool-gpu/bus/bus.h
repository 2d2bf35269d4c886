// An address space (port I/O or MMIO) where devices claim ranges, and the
// dispatch of one guest access to the device that owns it.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "kvmtool-gpu/bus/bus_device.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu {

// Devices are claimed during VM set-up (single-threaded); dispatch is then
// read-only and safe from several vCPU threads at once.
class Bus {
public:
    explicit Bus(std::string name) : name_(std::move(name)) {}

    // Throws std::invalid_argument for a zero-length range, one that wraps
    // past 2^64, or one that overlaps a range already claimed.
    void claim(uint64_t base, uint64_t length, std::shared_ptr<BusDevice> device);

    // False when no device owns [addr, addr+len): the access is counted and
    // logged (rate-limited) and a read returns zeros. `from`: the vCPU whose
    // exit this is (the vCPU loop's accesses), handed to the device.
    bool read(uint64_t addr, std::span<uint8_t> data, VcpuContext* from = nullptr);
    bool write(uint64_t addr, std::span<const uint8_t> data, VcpuContext* from = nullptr);

    uint64_t unclaimed_accesses() const { return unclaimed_.load(std::memory_order_relaxed); }
    // Warning lines about unclaimed accesses this bus's rate limit held back.
    uint64_t log_lines_held_back() const { return unclaimed_log_.suppressed(); }

private:
    struct Range {
        uint64_t base;
        uint64_t length;
        std::shared_ptr<BusDevice> device;
    };
    const Range* find(uint64_t addr, uint64_t len) const;
    void note_unclaimed(const char* kind, uint64_t addr, uint64_t len);

    std::string name_;
    std::map<uint64_t, Range> ranges_; // keyed by base
    std::atomic<uint64_t> unclaimed_{0};
    RateLimiter unclaimed_log_{10}; // the first 10 lines per second, per bus (per VM)
};

} // namespace kvmgpu
