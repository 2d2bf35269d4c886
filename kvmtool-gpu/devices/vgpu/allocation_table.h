// One VM's view of device memory: the allocations it holds (with its quota),
// its modules' __device__ variables, and the zero-copy device windows onto
// its own guest RAM. The device model
// asks it whether a guest-supplied device range [dptr, dptr + bytes) is the
// VM's to touch; nothing else decides that.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/range.h"

namespace kvmgpu::vgpu {

// Not thread-safe: owned by the executor thread.
class AllocationTable {
public:
    AllocationTable(uint64_t quota_bytes, uint32_t max_allocations)
        : quota_(quota_bytes), max_count_(max_allocations) {}

    // Would an allocation of `bytes` fit the quota and the count limit?
    bool can_reserve(uint64_t bytes) const;
    // Records a backend allocation made in context `owner`; false if
    // [dptr, dptr+bytes) wraps or overlaps one already recorded (a backend
    // bug, refused all the same).
    bool insert(uint64_t dptr, uint64_t bytes, uint64_t owner = 0);
    // Size of the allocation starting exactly at dptr, 0 if none; removes it.
    uint64_t erase(uint64_t dptr);
    // The context that made the allocation starting at dptr; 0 if none.
    uint64_t owner_of(uint64_t dptr) const {
        auto it = allocs_.find(dptr);
        return it == allocs_.end() ? 0 : it->second.owner;
    }
    // ... of the allocation holding dptr; 0 if none (a window, a global).
    uint64_t owner_containing(uint64_t dptr) const {
        auto it = allocs_.upper_bound(dptr);
        if (it == allocs_.begin()) return 0;
        --it;
        return dptr - it->first < it->second.bytes ? it->second.owner : 0;
    }
    // Device memory the VM spends without an allocation of its own (the
    // driver's mappings of a registered buffer), counted against the quota
    // like one. charge is false, and changes nothing, past the quota.
    bool charge(uint64_t bytes) {
        if (bytes > quota_ - used_) return false; // used_ <= quota_ always holds
        used_ += bytes;
        return true;
    }
    void uncharge(uint64_t bytes) { used_ -= std::min(bytes, used_); }
    // Forgets every allocation and charge (after the backend freed or lost them).
    void clear() { allocs_.clear(), globals_.clear(), mapped_.clear(), used_ = 0; }
    // Visits, then forgets, every allocation `owner` made: fn(dptr, bytes).
    template <typename Fn>
    void erase_owned_by(uint64_t owner, Fn&& fn) {
        for (auto it = allocs_.begin(); it != allocs_.end();) {
            if (it->second.owner != owner) {
                ++it;
                continue;
            }
            fn(it->first, it->second.bytes);
            used_ -= it->second.bytes;
            it = allocs_.erase(it);
        }
    }

    // Zero-copy windows: device addresses of guest RAM (not quota-counted).
    void set_windows(std::vector<std::pair<uint64_t, uint64_t>> base_and_bytes) { windows_ = std::move(base_and_bytes); }

    // A mapped range of the VM's reserved addresses with access set
    // (cuMemMap + cuMemSetAccess): the VM's device memory, its physical
    // memory counted through charge() when it was created.
    void add_mapped(uint64_t dptr, uint64_t bytes) { mapped_[dptr] = bytes; }
    void remove_mapped(uint64_t dptr) { mapped_.erase(dptr); }

    // A module's __device__ variable (cuModuleGetGlobal): the VM's while the
    // module is loaded, not quota-counted (the module's image holds it).
    // Asking again for the same variable records nothing new.
    void add_global(uint64_t dptr, uint64_t bytes, uintptr_t module);
    void drop_globals_of(uintptr_t module);

    // True when [dptr, dptr + bytes) lies wholly inside ONE allocation, ONE
    // mapped range, ONE global or ONE window; bytes == 0 asks about dptr alone. Overflow-safe.
    bool contains(uint64_t dptr, uint64_t bytes) const;
    bool in_allocation(uint64_t dptr, uint64_t bytes) const;

    uint64_t used() const { return used_; }
    uint64_t quota() const { return quota_; }
    size_t count() const { return allocs_.size(); }
    uint32_t max_count() const { return max_count_; }
    template <typename Fn>
    void for_each(Fn&& fn) const {
        for (const auto& [base, a] : allocs_) fn(base, a.bytes);
    }

private:
    uint64_t quota_;
    uint32_t max_count_;
    uint64_t used_ = 0;
    struct Allocation {
        uint64_t bytes;
        uint64_t owner;
    };
    std::map<uint64_t, Allocation> allocs_; // by base
    std::vector<std::pair<uint64_t, uint64_t>> windows_;
    std::map<uint64_t, uint64_t> mapped_; // start -> bytes
    struct Global {
        uint64_t dptr, bytes;
        uintptr_t module;
    };
    std::vector<Global> globals_; // a handful per module: a list is enough
};

} // namespace kvmgpu::vgpu
