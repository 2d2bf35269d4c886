#include "kvmtool-gpu/vmm/linux/guest_mmap.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace kvmgpu::linux_abi {

std::optional<uint64_t> page_round_up(uint64_t len) {
    if (len == 0 || len > UINT64_MAX - (kPage - 1)) return std::nullopt;
    return (len + kPage - 1) & ~(kPage - 1);
}

void IntervalSet::add(uint64_t start, uint64_t end) {
    if (start >= end) return;
    // Merge with every range that overlaps or touches [start, end).
    auto it = ranges_.upper_bound(start);
    if (it != ranges_.begin() && std::prev(it)->second >= start) --it;
    while (it != ranges_.end() && it->first <= end) {
        start = std::min(start, it->first);
        end = std::max(end, it->second);
        it = ranges_.erase(it);
    }
    ranges_.emplace(start, end);
}

void IntervalSet::remove(uint64_t start, uint64_t end) {
    if (start >= end) return;
    auto it = ranges_.upper_bound(start);
    if (it != ranges_.begin()) --it;
    while (it != ranges_.end() && it->first < end) {
        const uint64_t s = it->first, e = it->second;
        if (e <= start) {
            ++it;
            continue;
        }
        it = ranges_.erase(it);
        if (s < start) ranges_.emplace(s, start);
        if (e > end) ranges_.emplace(end, e);
    }
}

bool IntervalSet::contains(uint64_t start, uint64_t end) const {
    if (start >= end) return false;
    auto it = ranges_.upper_bound(start);
    if (it == ranges_.begin()) return false;
    --it;
    return it->first <= start && end <= it->second;
}

bool IntervalSet::intersects(uint64_t start, uint64_t end) const {
    bool any = false;
    for_each_overlap(start, end, [&](uint64_t, uint64_t) { any = true; });
    return any;
}

std::optional<uint64_t> IntervalSet::highest_fit(uint64_t len) const {
    for (auto it = ranges_.rbegin(); it != ranges_.rend(); ++it)
        if (it->second - it->first >= len) return it->second - len;
    return std::nullopt;
}

uint64_t IntervalSet::total() const {
    uint64_t n = 0;
    for (const auto& [s, e] : ranges_) n += e - s;
    return n;
}

GuestAddressSpace::GuestAddressSpace(const memmap::GuestMemory& mem, uint64_t lo, uint64_t hi, uint64_t brk_start)
    : mem_(mem), lo_(lo), hi_(hi), brk_start_(brk_start), brk_(brk_start) {
    if (lo % kPage || hi % kPage || brk_start % kPage || lo >= hi || brk_start < lo || brk_start > hi ||
        hi > mem.total_bytes())
        throw std::invalid_argument("guest address space: bad managed range");
    free_.add(lo, hi);
}

bool GuestAddressSpace::in_managed(uint64_t addr, uint64_t len) const {
    uint64_t end;
    return len != 0 && !__builtin_add_overflow(addr, len, &end) && addr >= lo_ && end <= hi_;
}

bool GuestAddressSpace::is_mapped(uint64_t addr, uint64_t len) const {
    return in_managed(addr, len) && !free_.intersects(addr, addr + len);
}

void GuestAddressSpace::hand_out(uint64_t start, uint64_t end) {
    free_.remove(start, end);
    dirty_.for_each_overlap(start, end, [&](uint64_t s, uint64_t e) {
        // SAFETY: [s, e) lies inside the managed range, inside guest RAM (checked at construction).
        if (auto host = mem_.translate(memmap::GuestPhysAddr{s}, e - s)) std::memset(host->data(), 0, e - s);
    });
    dirty_.remove(start, end);
}

void GuestAddressSpace::take_back(uint64_t start, uint64_t end) {
    // Only what was in use can hold the guest's data.
    IntervalSet used;
    used.add(start, end);
    free_.for_each_overlap(start, end, [&](uint64_t s, uint64_t e) { used.remove(s, e); });
    used.for_each_overlap(start, end, [&](uint64_t s, uint64_t e) { dirty_.add(s, e); });
    free_.add(start, end);
    reserved_.remove(start, end); // program pages unmapped: ordinary memory from now on
}

std::vector<std::pair<uint64_t, uint64_t>> GuestAddressSpace::reserved_within(uint64_t start, uint64_t end) const {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    reserved_.for_each_overlap(start, end, [&](uint64_t s, uint64_t e) { out.emplace_back(s, e); });
    return out;
}

std::vector<std::pair<uint64_t, uint64_t>> GuestAddressSpace::mappings() const {
    IntervalSet used;
    used.add(lo_, hi_);
    free_.for_each_overlap(lo_, hi_, [&](uint64_t s, uint64_t e) { used.remove(s, e); });
    reserved_.for_each_overlap(lo_, hi_, [&](uint64_t s, uint64_t e) { used.remove(s, e); });
    const auto [heap_lo, heap_hi] = heap();
    if (heap_hi > heap_lo) used.remove(heap_lo, heap_hi);
    std::vector<std::pair<uint64_t, uint64_t>> out;
    used.for_each_overlap(lo_, hi_, [&](uint64_t s, uint64_t e) { out.emplace_back(s, e); });
    return out;
}

void GuestAddressSpace::zero_in_use(uint64_t addr, uint64_t len) {
    uint64_t end;
    if (__builtin_add_overflow(addr, len, &end)) end = UINT64_MAX;
    const uint64_t s = std::max(addr, lo_), e = std::min(end, hi_);
    if (s >= e) return;
    IntervalSet used;
    used.add(s, e);
    free_.for_each_overlap(s, e, [&](uint64_t fs, uint64_t fe) { used.remove(fs, fe); });
    reserved_.for_each_overlap(s, e, [&](uint64_t rs, uint64_t re) { used.remove(rs, re); });
    used.for_each_overlap(s, e, [&](uint64_t us, uint64_t ue) {
        // SAFETY: [us, ue) lies inside the managed range, inside guest RAM (checked at construction).
        if (auto host = mem_.translate(memmap::GuestPhysAddr{us}, ue - us)) std::memset(host->data(), 0, ue - us);
    });
}

uint64_t GuestAddressSpace::brk(uint64_t want) {
    if (want < brk_start_ || want > hi_) return brk_;
    const uint64_t cur_end = (brk_ + kPage - 1) & ~(kPage - 1);
    const uint64_t new_end = (want + kPage - 1) & ~(kPage - 1);
    if (new_end > cur_end) {
        if (!free_.contains(cur_end, new_end)) return brk_; // something is mapped there
        hand_out(cur_end, new_end);
    } else if (new_end < cur_end) {
        take_back(new_end, cur_end);
    }
    brk_ = want;
    return brk_;
}

std::optional<uint64_t> GuestAddressSpace::map_anywhere(uint64_t len) {
    const auto rounded = page_round_up(len);
    if (!rounded) return std::nullopt;
    const auto at = free_.highest_fit(*rounded);
    if (!at) return std::nullopt;
    hand_out(*at, *at + *rounded);
    return *at;
}

bool GuestAddressSpace::map_fixed(uint64_t addr, uint64_t len, bool replace) {
    const auto rounded = page_round_up(len);
    if (addr % kPage || !rounded || !in_managed(addr, *rounded)) return false;
    if (!replace && !free_.contains(addr, addr + *rounded)) return false;
    take_back(addr, addr + *rounded); // the old contents go: a fresh mapping is zero
    hand_out(addr, addr + *rounded);
    return true;
}

void GuestAddressSpace::unmap(uint64_t addr, uint64_t len) {
    uint64_t end;
    if (__builtin_add_overflow(addr, len, &end)) return;
    const uint64_t s = std::max(addr, lo_), e = std::min(end, hi_);
    if (s >= e) return;
    const uint64_t brk_end = (brk_ + kPage - 1) & ~(kPage - 1);
    // The brk area belongs to brk(); unmapping it would let mmap hand it out twice.
    if (e <= brk_start_ || s >= brk_end) take_back(s, e);
    else {
        if (s < brk_start_) take_back(s, brk_start_);
        if (e > brk_end) take_back(brk_end, e);
    }
}

std::optional<uint64_t> GuestAddressSpace::remap(uint64_t old_addr, uint64_t old_len, uint64_t new_len,
                                                 bool may_move) {
    const auto old_r = page_round_up(old_len), new_r = page_round_up(new_len);
    if (old_addr % kPage || !old_r || !new_r || !is_mapped(old_addr, *old_r)) return std::nullopt;
    if (*new_r <= *old_r) {
        unmap(old_addr + *new_r, *old_r - *new_r);
        return old_addr;
    }
    const uint64_t grow_at = old_addr + *old_r, grow = *new_r - *old_r;
    if (in_managed(grow_at, grow) && free_.contains(grow_at, grow_at + grow)) {
        hand_out(grow_at, grow_at + grow);
        return old_addr;
    }
    if (!may_move) return std::nullopt;
    const auto moved = map_anywhere(*new_r);
    if (!moved) return std::nullopt;
    auto from = mem_.translate(memmap::GuestPhysAddr{old_addr}, *old_r);
    auto to = mem_.translate(memmap::GuestPhysAddr{*moved}, *old_r);
    // SAFETY: both spans lie in the managed range of guest RAM, and do not overlap (the new one was free).
    if (from && to) std::memcpy(to->data(), from->data(), *old_r);
    unmap(old_addr, *old_r);
    return *moved;
}

} // namespace kvmgpu::linux_abi
