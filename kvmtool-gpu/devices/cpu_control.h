// Requests a ring-3 guest makes about state only ring 0 may change
// (platform_abi.h, CPU control): load CR3, open or close the calibration
// window. The device only records the request; the run loop carries it out
// before the next KVM_RUN, since that needs the vCPU fd and a completed exit.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "kvmtool-gpu/bus/bus_device.h"

namespace kvmgpu {

struct CpuRequest {
    enum class Kind { LoadCr3, CalibrateBegin, CalibrateEnd };
    Kind kind;
    uint64_t value; // CR3: the root as written (unchecked); CalibrateBegin: loop count
};

class CpuControl : public BusDevice {
public:
    std::string_view name() const override { return "cpu-control"; }
    void read(uint64_t, std::span<uint8_t>) override {}
    // Only aligned 8-byte writes to a known register count; others are ignored.
    void write(uint64_t offset, std::span<const uint8_t> data) override;

    // The request the calling thread's last exit made, once.
    std::optional<CpuRequest> take();

private:
    std::mutex mu_;
    std::map<std::thread::id, CpuRequest> pending_; // at most one per vCPU thread
};

} // namespace kvmgpu
