// Guest RAM as the VMM sees it: a table of regions, each a host mapping
// (a Backing) placed at a guest-physical base, and the one checked way to
// turn a guest-physical span into host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "memmap/backing.h"
#include "memmap/guest_phys_addr.h"

namespace memmap {

// One slot of guest RAM: [base, base + backing->size()).
struct Region {
    GuestPhysAddr base;
    std::unique_ptr<Backing> backing;
    uint64_t size() const { return backing->size(); }
};

// Owns the VM's RAM regions. Every access to guest RAM by the VMM and its
// devices goes through translate()/read()/write(): spans that overflow, leave
// their region or straddle two regions are refused (std::nullopt / false).
// add_region() is for setup; the const accessors may then run concurrently.
class GuestMemory {
public:
    // Throws std::invalid_argument on overlap, zero size or address overflow
    // (the region must end below 2^64), or when base is not aligned to the
    // backing's page size (KVM maps a huge page as huge only when aligned).
    void add_region(GuestPhysAddr base, std::unique_ptr<Backing> backing);

    const std::vector<Region>& regions() const { return regions_; }
    uint64_t total_bytes() const;

    // Host view of [gpa, gpa+len), wholly inside one region; len 0 is refused.
    std::optional<std::span<uint8_t>> translate(GuestPhysAddr gpa, uint64_t len) const;

    bool read(GuestPhysAddr gpa, void* dst, uint64_t len) const;
    bool write(GuestPhysAddr gpa, const void* src, uint64_t len) const;

    template <typename T>
    std::optional<T> read_obj(GuestPhysAddr gpa) const {
        T value;
        if (!read(gpa, &value, sizeof(T))) return std::nullopt;
        return value;
    }
    template <typename T>
    bool write_obj(GuestPhysAddr gpa, const T& value) const { return write(gpa, &value, sizeof(T)); }

private:
    std::vector<Region> regions_; // sorted by base
};

} // namespace memmap
