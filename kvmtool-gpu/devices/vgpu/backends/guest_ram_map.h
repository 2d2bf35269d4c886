// Where each registered slice of guest RAM sits in a backend's device
// address space (its zero-copy mapping): host pointer -> device address and
// back. Shared by the host and CUDA backends.
#pragma once

#include <cstdint>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/range.h"

namespace kvmgpu::vgpu {

class GuestRamMap {
public:
    struct Range {
        uint8_t* host;
        uint64_t bytes;
        uint64_t dev;
    };

    void add(uint8_t* host, uint64_t bytes, uint64_t dev) { ranges_.push_back(Range{host, bytes, dev}); }
    void clear() { ranges_.clear(); }
    // Forgets the range starting at host; false if there is none.
    bool remove(const uint8_t* host) {
        for (auto it = ranges_.begin(); it != ranges_.end(); ++it)
            if (it->host == host) return ranges_.erase(it), true;
        return false;
    }
    bool empty() const { return ranges_.empty(); }
    const std::vector<Range>& ranges() const { return ranges_; }

    // Device address of `host`, 0 if it is not in registered guest RAM.
    uint64_t device_address(const void* host) const {
        const auto* p = static_cast<const uint8_t*>(host);
        for (const Range& r : ranges_)
            if (p >= r.host && static_cast<uint64_t>(p - r.host) < r.bytes) return r.dev + static_cast<uint64_t>(p - r.host);
        return 0;
    }
    // Host view of device range [dev, dev + bytes) if it lies in one range.
    uint8_t* host_of(uint64_t dev, uint64_t bytes) const {
        for (const Range& r : ranges_)
            if (range_inside(dev, bytes, r.dev, r.bytes)) return r.host + (dev - r.dev);
        return nullptr;
    }

private:
    std::vector<Range> ranges_; // a VM has a handful of RAM regions: a scan is cheapest
};

} // namespace kvmgpu::vgpu
