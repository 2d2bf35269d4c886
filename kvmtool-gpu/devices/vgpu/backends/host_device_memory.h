// What the host backend and its parts (host_arrays.h, host_virtual_memory.h)
// draw on together: the "device"'s memory budget, its fake address range
// and the numbers its objects get, so each part depends on this and not on
// the backend.
#pragma once

#include <cstdint>
#include <functional>

#include "kvmtool-gpu/devices/vgpu/backends/fake_address_space.h"

namespace kvmgpu::vgpu {

class HostDeviceMemory {
public:
    HostDeviceMemory(uint64_t total_bytes, FakeAddressRange& addresses) : total_(total_bytes), addresses_(addresses) {}
    HostDeviceMemory(const HostDeviceMemory&) = delete;
    HostDeviceMemory& operator=(const HostDeviceMemory&) = delete;

    // Counts `bytes` as used; false (nothing counted) past the budget.
    bool take(uint64_t bytes) {
        if (bytes > total_ - used_) return false;
        used_ += bytes;
        return true;
    }
    void give(uint64_t bytes) { used_ -= bytes; }
    void give_all() { used_ = 0; } // a recovered context: everything went
    uint64_t free_bytes() const { return total_ - used_; }
    // Module, stream, event, array and handle numbers: small, not pointers.
    uint64_t next_object() { return next_object_++; }
    FakeAddressRange& addresses() { return addresses_; }
    // Whether [va, va + bytes) meets memory the backend itself placed
    // (allocations, guest RAM's windows); the backend sets it.
    std::function<bool(uint64_t va, uint64_t bytes)> in_use;

private:
    uint64_t total_;
    uint64_t used_ = 0;
    uint64_t next_object_ = 0x1000;
    FakeAddressRange& addresses_;
};

} // namespace kvmgpu::vgpu
