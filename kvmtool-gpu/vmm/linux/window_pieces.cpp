#include "kvmtool-gpu/vmm/linux/window_pieces.h"

#include <sys/mman.h>

#include <algorithm>
#include <iterator>

namespace kvmgpu::linux_abi {

SlotClass slot_class(int prot) {
    if (prot & PROT_WRITE) return SlotClass::Writable;
    if (prot & (PROT_READ | PROT_EXEC)) return SlotClass::ReadOnly;
    return SlotClass::None;
}

bool WindowPieces::inside(uint64_t start, uint64_t len) const {
    uint64_t end;
    return len != 0 && !__builtin_add_overflow(start, len, &end) && start >= lo_ && end <= hi_;
}

std::optional<uint64_t> WindowPieces::find_free(uint64_t len, uint64_t align) const {
    if (len == 0 || len > hi_ - lo_) return std::nullopt;
    auto aligned = [&](uint64_t v) -> std::optional<uint64_t> {
        uint64_t r;
        if (__builtin_add_overflow(v, align - 1, &r)) return std::nullopt;
        return r & ~(align - 1);
    };
    uint64_t cursor = lo_;
    for (auto it = pieces_.begin();; ++it) {
        const uint64_t gap_end = it == pieces_.end() ? hi_ : it->first;
        if (auto at = aligned(cursor); at && *at <= gap_end && gap_end - *at >= len) return *at;
        if (it == pieces_.end()) return std::nullopt;
        cursor = it->second.end;
    }
}

void WindowPieces::split_at(uint64_t addr) {
    auto it = pieces_.upper_bound(addr);
    if (it == pieces_.begin()) return;
    --it;
    if (it->first >= addr || it->second.end <= addr) return;
    WindowPiece tail = it->second;
    if (!tail.anonymous) tail.offset += addr - it->first;
    it->second.end = addr;
    pieces_.emplace(addr, std::move(tail));
}

void WindowPieces::merge_around(uint64_t addr) {
    auto right = pieces_.find(addr);
    if (right == pieces_.end() || right == pieces_.begin()) return;
    auto left = std::prev(right);
    const WindowPiece &l = left->second, &r = right->second;
    if (l.end != addr || l.prot != r.prot || l.anonymous != r.anonymous || l.name != r.name) return;
    if (!l.anonymous && l.offset + (addr - left->first) != r.offset) return;
    left->second.end = r.end;
    pieces_.erase(right);
}

void WindowPieces::erase(uint64_t start, uint64_t end) {
    if (start >= end) return;
    split_at(start);
    split_at(end);
    pieces_.erase(pieces_.lower_bound(start), pieces_.lower_bound(end));
}

void WindowPieces::insert(uint64_t start, uint64_t end, WindowPiece piece) {
    if (start >= end) return;
    erase(start, end);
    piece.end = end;
    pieces_.emplace(start, std::move(piece));
    merge_around(end);
    merge_around(start);
}

bool WindowPieces::fully_mapped(uint64_t start, uint64_t end) const {
    if (start >= end) return false;
    uint64_t cursor = start;
    for (const auto& [s, p] : overlapping(start, end)) {
        if (s != cursor) return false;
        cursor = p.end;
    }
    return cursor == end;
}

void WindowPieces::protect(uint64_t start, uint64_t end, int prot) {
    if (start >= end) return;
    split_at(start);
    split_at(end);
    for (auto it = pieces_.lower_bound(start); it != pieces_.end() && it->first < end; ++it) it->second.prot = prot;
    // Rejoin what the split cut where the protection is the same again.
    std::vector<uint64_t> starts;
    for (auto it = pieces_.lower_bound(start); it != pieces_.end() && it->first <= end; ++it) starts.push_back(it->first);
    for (auto s = starts.rbegin(); s != starts.rend(); ++s) merge_around(*s);
}

std::optional<std::pair<uint64_t, WindowPiece>> WindowPieces::at(uint64_t addr) const {
    auto it = pieces_.upper_bound(addr);
    if (it == pieces_.begin()) return std::nullopt;
    --it;
    if (addr >= it->second.end) return std::nullopt;
    return *it;
}

std::vector<std::pair<uint64_t, WindowPiece>> WindowPieces::overlapping(uint64_t start, uint64_t end) const {
    std::vector<std::pair<uint64_t, WindowPiece>> out;
    if (start >= end) return out;
    auto it = pieces_.upper_bound(start);
    if (it != pieces_.begin()) --it;
    for (; it != pieces_.end() && it->first < end; ++it) {
        if (it->second.end <= start) continue;
        WindowPiece p = it->second;
        uint64_t s = it->first;
        if (s < start) {
            if (!p.anonymous) p.offset += start - s;
            s = start;
        }
        if (p.end > end) p.end = end;
        out.emplace_back(s, std::move(p));
    }
    return out;
}

WindowPieces::Snapshot WindowPieces::snapshot(uint64_t start, uint64_t end) const {
    Snapshot s{start, end, {}};
    auto it = pieces_.upper_bound(start);
    if (it != pieces_.begin()) --it;
    for (; it != pieces_.end() && it->first <= end; ++it) {
        if (it->second.end < start) continue;
        s.start = std::min(s.start, it->first);
        s.end = std::max(s.end, it->second.end);
        s.pieces.push_back(*it);
    }
    return s;
}

void WindowPieces::restore(const Snapshot& s) {
    // Whatever the operation left in [s.start, s.end) came from these pieces
    // and [start, end): merges never reach past the pieces that touched it.
    erase(s.start, s.end);
    for (const auto& piece : s.pieces) pieces_.insert(piece);
}

std::vector<SlotRun> WindowPieces::runs(uint64_t start, uint64_t end) const {
    std::vector<SlotRun> out;
    for (const auto& [s, p] : overlapping(start, end)) {
        const SlotClass cls = slot_class(p.prot);
        if (cls == SlotClass::None) continue;
        if (!out.empty() && out.back().end == s && out.back().cls == cls) out.back().end = p.end;
        else out.push_back(SlotRun{s, p.end, cls});
    }
    return out;
}

} // namespace kvmgpu::linux_abi
