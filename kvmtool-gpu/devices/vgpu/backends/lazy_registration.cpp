#include "kvmtool-gpu/devices/vgpu/backends/lazy_registration.h"

#include <algorithm>

namespace kvmgpu::vgpu {

bool LazyRegistration::is_region(const void* host) const {
    for (const Region& r : regions_)
        if (r.host == host) return true;
    return false;
}

int LazyRegistration::region_index(const uint8_t* p, uint64_t bytes) const {
    for (size_t i = 0; i < regions_.size(); ++i) {
        const Region& r = regions_[i];
        if (p >= r.host && static_cast<uint64_t>(p - r.host) <= r.bytes && bytes <= r.bytes - static_cast<uint64_t>(p - r.host))
            return static_cast<int>(i);
    }
    return -1;
}

LazyRegistration::Status LazyRegistration::prepare(const void* host, uint64_t bytes, const RegisterFn& fn) {
    const int i = region_index(static_cast<const uint8_t*>(host), bytes);
    if (i < 0 || bytes == 0) return VGPU_SUCCESS;
    Region& r = regions_[static_cast<size_t>(i)];
    const uint64_t at = static_cast<uint64_t>(static_cast<const uint8_t*>(host) - r.host);
    const uint64_t lo = at / kGranule * kGranule;
    const uint64_t end = at + bytes; // <= r.bytes: no overflow
    const uint64_t hi = std::min(r.bytes, (end + kGranule - 1) / kGranule * kGranule);
    return fill(r, lo, hi, fn);
}

LazyRegistration::Status LazyRegistration::prepare_as_one(const void* host, uint64_t bytes, const RegisterFn& fn,
                                                          const RegisterFn& drop) {
    const int i = region_index(static_cast<const uint8_t*>(host), bytes);
    if (i < 0 || bytes == 0) return VGPU_SUCCESS;
    Region& r = regions_[static_cast<size_t>(i)];
    const uint64_t at = static_cast<uint64_t>(static_cast<const uint8_t*>(host) - r.host);
    if (piece_at(r, at, bytes) == bytes && r.done.upper_bound(at) != r.done.begin()) {
        const auto& [start, len] = *std::prev(r.done.upper_bound(at));
        if (at < start + len) return VGPU_SUCCESS; // one registration holds it already
    }
    uint64_t lo = at / kGranule * kGranule;
    uint64_t hi = std::min(r.bytes, (at + bytes + kGranule - 1) / kGranule * kGranule);
    // The registrations meeting [lo, hi): they are disjoint, so taking their
    // ends in meets no other.
    auto first = r.done.upper_bound(lo);
    if (first != r.done.begin() && std::prev(first)->first + std::prev(first)->second > lo) --first;
    const auto last = r.done.lower_bound(hi);
    if (first != last) {
        lo = std::min(lo, first->first);
        hi = std::max(hi, std::prev(last)->first + std::prev(last)->second);
    }
    for (auto it = first; it != last;) {
        if (const Status s = drop(r.host + it->first, it->second); s != VGPU_SUCCESS) return s;
        registered_bytes_ -= it->second;
        it = r.done.erase(it);
    }
    return fill(r, lo, hi, fn); // one gap now: one registration
}

LazyRegistration::Status LazyRegistration::prepare_all(const RegisterFn& fn) {
    for (Region& r : regions_)
        if (const Status s = fill(r, 0, r.bytes, fn); s != VGPU_SUCCESS) return s;
    return VGPU_SUCCESS;
}

// Registers each gap between registrations in [lo, hi).
LazyRegistration::Status LazyRegistration::fill(Region& r, uint64_t lo, uint64_t hi, const RegisterFn& fn) {
    uint64_t at = lo;
    auto next = r.done.upper_bound(at);
    if (next != r.done.begin()) {
        auto prev = std::prev(next);
        at = std::max(at, prev->first + prev->second);
    }
    while (at < hi) {
        const uint64_t gap_end = next == r.done.end() ? hi : std::min(hi, next->first);
        if (gap_end > at) {
            if (const Status s = fn(r.host + at, gap_end - at); s != VGPU_SUCCESS) return s;
            r.done.emplace(at, gap_end - at);
            registered_bytes_ += gap_end - at;
        }
        if (next == r.done.end()) break;
        at = next->first + next->second;
        ++next;
    }
    return VGPU_SUCCESS;
}

uint64_t LazyRegistration::piece_at(const Region& r, uint64_t at, uint64_t left) {
    auto next = r.done.upper_bound(at);
    if (next != r.done.begin()) {
        auto prev = std::prev(next);
        const uint64_t prev_end = prev->first + prev->second;
        if (at < prev_end) return std::min(left, prev_end - at); // inside a registration
    }
    // Unregistered: up to the next registration.
    return next == r.done.end() ? left : std::min(left, next->first - at);
}

uint64_t LazyRegistration::piece_bytes(const void* host, uint64_t left) const {
    const auto* p = static_cast<const uint8_t*>(host);
    const int i = region_index(p, 1);
    if (i < 0) return left;
    const Region& r = regions_[static_cast<size_t>(i)];
    const uint64_t at = static_cast<uint64_t>(p - r.host);
    return piece_at(r, at, std::min(left, r.bytes - at));
}

std::vector<LazyRegistration::Piece> LazyRegistration::registrations() const {
    std::vector<Piece> out;
    for (const Region& r : regions_)
        for (const auto& [off, len] : r.done) out.push_back(Piece{r.host + off, len});
    return out;
}

void LazyRegistration::forget_registrations() {
    for (Region& r : regions_) r.done.clear();
    registered_bytes_ = 0;
}

} // namespace kvmgpu::vgpu
