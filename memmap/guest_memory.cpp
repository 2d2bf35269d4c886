// GuestMemory: the region table and the single checked translation from a
// guest-physical span to host memory. Every length and address here may come
// from the guest, so each sum is a checked add and nothing throws after setup.
#include "memmap/guest_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace memmap {

void GuestMemory::add_region(GuestPhysAddr base, std::unique_ptr<Backing> backing) {
    if (!backing || backing->size() == 0) {
        throw std::invalid_argument("guest memory region at " + hex(base.value) + " has no backing or zero size");
    }
    const uint64_t size = backing->size();
    // The end must be representable: a region touching 2^64 would make every
    // `end` computation below wrap.
    const auto end = base.checked_add(size);
    if (!end) {
        throw std::invalid_argument("guest memory region at " + hex(base.value) + " of size " + hex(size) +
                                    " runs past the end of the 64-bit address space");
    }
    // KVM maps guest RAM in host-page units, and only maps a huge host page
    // as huge in the EPT when the guest-physical base is aligned to it; a
    // misaligned 2M region would quietly measure 4K translation.
    const uint64_t align = bytes(backing->page_size());
    if (base.value % align != 0) {
        throw std::invalid_argument("guest memory region at " + hex(base.value) + " is not aligned to its " +
                                    std::string(to_string(backing->page_size())) + " page size");
    }
    // First region whose base is above ours; its predecessor is the only one
    // that could reach into us from below.
    auto next = std::upper_bound(regions_.begin(), regions_.end(), base,
                                 [](GuestPhysAddr b, const Region& r) { return b < r.base; });
    if (next != regions_.end() && next->base < *end) {
        throw std::invalid_argument("guest memory region [" + hex(base.value) + ", " + hex(end->value) +
                                    ") overlaps the region at " + hex(next->base.value));
    }
    if (next != regions_.begin()) {
        const Region& prev = *(next - 1);
        const uint64_t prev_end = prev.base.value + prev.size(); // checked when prev was added
        if (prev_end > base.value) {
            throw std::invalid_argument("guest memory region [" + hex(base.value) + ", " + hex(end->value) +
                                        ") overlaps the region [" + hex(prev.base.value) + ", " + hex(prev_end) + ")");
        }
    }
    regions_.insert(next, Region{base, std::move(backing)});
}

uint64_t GuestMemory::total_bytes() const {
    uint64_t total = 0;
    // Cannot overflow: regions are disjoint and each ends below 2^64.
    for (const Region& r : regions_) total += r.size();
    return total;
}

std::optional<std::span<uint8_t>> GuestMemory::translate(GuestPhysAddr gpa, uint64_t len) const {
    if (len == 0) return std::nullopt;
    const auto end = gpa.checked_add(len);
    if (!end) return std::nullopt;
    // The last region whose base is <= gpa is the only candidate.
    auto it = std::upper_bound(regions_.begin(), regions_.end(), gpa,
                               [](GuestPhysAddr g, const Region& r) { return g < r.base; });
    if (it == regions_.begin()) return std::nullopt;
    const Region& r = *(it - 1);
    const uint64_t offset = gpa.value - r.base.value;
    // offset < size and len <= size - offset, written so neither side wraps.
    if (offset >= r.size() || len > r.size() - offset) return std::nullopt;
    return std::span<uint8_t>(r.backing->data() + offset, len);
}

bool GuestMemory::read(GuestPhysAddr gpa, void* dst, uint64_t len) const {
    const auto host = translate(gpa, len);
    if (!host) return false;
    // SAFETY: translate() returned a span of exactly len bytes inside one live backing.
    std::memcpy(dst, host->data(), len);
    return true;
}

bool GuestMemory::write(GuestPhysAddr gpa, const void* src, uint64_t len) const {
    const auto host = translate(gpa, len);
    if (!host) return false;
    // SAFETY: translate() returned a span of exactly len bytes inside one live backing.
    std::memcpy(host->data(), src, len);
    return true;
}

} // namespace memmap
