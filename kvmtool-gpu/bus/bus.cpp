#include "kvmtool-gpu/bus/bus.h"

#include <algorithm>
#include <stdexcept>

#include "kvmtool-gpu/util/log.h"
#include "memmap/guest_phys_addr.h"

namespace kvmgpu {

using memmap::hex;

void Bus::claim(uint64_t base, uint64_t length, std::shared_ptr<BusDevice> device) {
    if (!device) throw std::invalid_argument(name_ + ": claim without a device");
    const std::string what = name_ + " range " + hex(base) + "+" + hex(length) + " (" +
                             std::string(device->name()) + ")";
    if (length == 0) throw std::invalid_argument(what + ": zero length");
    uint64_t last;
    if (__builtin_add_overflow(base, length - 1, &last))
        throw std::invalid_argument(what + ": wraps past the end of the address space");
    // The neighbour at or after base, and the one before it, are the only
    // ranges that can overlap.
    auto next = ranges_.lower_bound(base);
    if (next != ranges_.end() && next->first <= last)
        throw std::invalid_argument(what + ": overlaps " + std::string(next->second.device->name()));
    if (next != ranges_.begin()) {
        const Range& prev = std::prev(next)->second;
        if (prev.base + (prev.length - 1) >= base)
            throw std::invalid_argument(what + ": overlaps " + std::string(prev.device->name()));
    }
    ranges_.emplace(base, Range{base, length, std::move(device)});
}

const Bus::Range* Bus::find(uint64_t addr, uint64_t len) const {
    if (len == 0) return nullptr;
    uint64_t last;
    if (__builtin_add_overflow(addr, len - 1, &last)) return nullptr;
    auto it = ranges_.upper_bound(addr);
    if (it == ranges_.begin()) return nullptr;
    const Range& r = std::prev(it)->second;
    // The whole access must fall inside the one range.
    if (addr - r.base > r.length - 1 || last - r.base > r.length - 1) return nullptr;
    return &r;
}

void Bus::note_unclaimed(const char* kind, uint64_t addr, uint64_t len) {
    const uint64_t n = unclaimed_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (unclaimed_log_.allow())
        log_warn("%s: unclaimed %s at %s len %llu (%llu so far)", name_.c_str(), kind, hex(addr).c_str(),
                 static_cast<unsigned long long>(len), static_cast<unsigned long long>(n));
}

bool Bus::read(uint64_t addr, std::span<uint8_t> data, VcpuContext* from) {
    std::fill(data.begin(), data.end(), uint8_t{0});
    const Range* r = find(addr, data.size());
    if (!r) {
        note_unclaimed("read", addr, data.size());
        return false;
    }
    if (from) r->device->vcpu_read(addr - r->base, data, *from);
    else r->device->read(addr - r->base, data);
    return true;
}

bool Bus::write(uint64_t addr, std::span<const uint8_t> data, VcpuContext* from) {
    const Range* r = find(addr, data.size());
    if (!r) {
        note_unclaimed("write", addr, data.size());
        return false;
    }
    if (from) r->device->vcpu_write(addr - r->base, data, *from);
    else r->device->write(addr - r->base, data);
    return true;
}

} // namespace kvmgpu
