#include "kvmtool-gpu/devices/vgpu/backends/fake_address_space.h"

#include <bitset>
#include <mutex>
#include <iterator>
#include <stdexcept>
#include <string>

namespace kvmgpu::vgpu {

FakeAddressRange::FakeAddressRange(uint64_t base, uint64_t span) : base_(base), span_(span) {
    if (span > 0) free_.emplace(base, span);
}

uint64_t FakeAddressRange::reserve(uint64_t bytes) {
    if (bytes == 0 || bytes > span_ - 2 * kGranule) return 0;
    const uint64_t need = (bytes + 2 * kGranule - 1) / kGranule * kGranule; // rounded, plus the guard
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->second < need) continue;
        const uint64_t at = it->first, left = it->second - need;
        free_.erase(it);
        if (left) free_.emplace(at + need, left);
        used_.emplace(at, need);
        return at;
    }
    return 0;
}

bool FakeAddressRange::release(uint64_t at) {
    auto u = used_.find(at);
    if (u == used_.end()) return false;
    uint64_t start = at, bytes = u->second;
    used_.erase(u);
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + bytes) {
        bytes += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == start) {
            start = prev->first;
            bytes += prev->second;
            free_.erase(prev);
        }
    }
    free_.emplace(start, bytes);
    return true;
}

namespace {
std::mutex g_slices_mu;
std::bitset<FakeSliceLease::kSlices> g_slices_leased; // index i: slice i of every window

unsigned lease_slice() {
    std::lock_guard lock(g_slices_mu);
    for (unsigned i = 0; i < FakeSliceLease::kSlices; ++i)
        if (!g_slices_leased[i]) {
            g_slices_leased[i] = true;
            return i;
        }
    throw std::runtime_error("host backend: every fake device-address slice of this process is leased (" +
                             std::to_string(FakeSliceLease::kSlices) + " devices at once)");
}
} // namespace

FakeSliceLease::FakeSliceLease() : index_(lease_slice()) {}

FakeSliceLease::~FakeSliceLease() {
    std::lock_guard lock(g_slices_mu);
    g_slices_leased[index_] = false;
}

} // namespace kvmgpu::vgpu
