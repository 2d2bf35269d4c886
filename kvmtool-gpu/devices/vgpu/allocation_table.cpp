#include "kvmtool-gpu/devices/vgpu/allocation_table.h"

#include <algorithm>

namespace kvmgpu::vgpu {

bool AllocationTable::can_reserve(uint64_t bytes) const {
    if (allocs_.size() >= max_count_) return false;
    return bytes <= quota_ - used_; // used_ <= quota_ always holds
}

bool AllocationTable::insert(uint64_t dptr, uint64_t bytes, uint64_t owner) {
    uint64_t end;
    if (bytes == 0 || __builtin_add_overflow(dptr, bytes, &end)) return false;
    if (!can_reserve(bytes)) return false;
    auto next = allocs_.lower_bound(dptr);
    if (next != allocs_.end() && next->first < end) return false;
    if (next != allocs_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second.bytes > dptr) return false;
    }
    allocs_.emplace(dptr, Allocation{bytes, owner});
    used_ += bytes;
    return true;
}

uint64_t AllocationTable::erase(uint64_t dptr) {
    auto it = allocs_.find(dptr);
    if (it == allocs_.end()) return 0;
    const uint64_t bytes = it->second.bytes;
    used_ -= bytes;
    allocs_.erase(it);
    return bytes;
}

bool AllocationTable::in_allocation(uint64_t dptr, uint64_t bytes) const {
    auto it = allocs_.upper_bound(dptr); // first base > dptr
    if (it == allocs_.begin()) return false;
    --it;
    return range_inside(dptr, bytes, it->first, it->second.bytes);
}

void AllocationTable::add_global(uint64_t dptr, uint64_t bytes, uintptr_t module) {
    for (const Global& g : globals_)
        if (g.dptr == dptr && g.bytes == bytes && g.module == module) return;
    globals_.push_back({dptr, bytes, module});
}

void AllocationTable::drop_globals_of(uintptr_t module) {
    std::erase_if(globals_, [&](const Global& g) { return g.module == module; });
}

bool AllocationTable::contains(uint64_t dptr, uint64_t bytes) const {
    if (in_allocation(dptr, bytes)) return true;
    if (auto it = mapped_.upper_bound(dptr); it != mapped_.begin() && range_inside(dptr, bytes, std::prev(it)->first,
                                                                                     std::prev(it)->second))
        return true;
    for (const Global& g : globals_)
        if (range_inside(dptr, bytes, g.dptr, g.bytes)) return true;
    for (const auto& [base, size] : windows_)
        if (range_inside(dptr, bytes, base, size)) return true;
    return false;
}

} // namespace kvmgpu::vgpu
