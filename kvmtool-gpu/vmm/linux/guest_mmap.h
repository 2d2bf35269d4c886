// The address space a Linux-ABI guest's brk and mmap draw from. Guest
// virtual == guest physical, so this is an allocator of guest RAM pages:
// a free set over the managed range, anonymous mappings taken top-down
// (first fit from the top, as Linux places them below the stack), the brk
// growing up from the end of the program into whatever is still free. What
// it hands out is zero: ranges the guest used before are remembered as
// dirty and cleared when handed out again (RAM never used is zero already).
// No KVM here; the syscall layer turns its results into errno values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "memmap/guest_memory.h"

namespace kvmgpu::linux_abi {

constexpr uint64_t kPage = 4096;

// A set of disjoint, non-adjacent half-open ranges [start, end).
class IntervalSet {
public:
    void add(uint64_t start, uint64_t end);
    void remove(uint64_t start, uint64_t end);
    bool contains(uint64_t start, uint64_t end) const; // wholly inside one range
    bool intersects(uint64_t start, uint64_t end) const;
    // Start of the highest placement of `len` bytes inside one range.
    std::optional<uint64_t> highest_fit(uint64_t len) const;
    template <class F>
    void for_each_overlap(uint64_t start, uint64_t end, F f) const {
        auto it = ranges_.upper_bound(start);
        if (it != ranges_.begin()) --it;
        for (; it != ranges_.end() && it->first < end; ++it)
            if (it->second > start) f(std::max(it->first, start), std::min(it->second, end));
    }
    uint64_t total() const;
    size_t pieces() const { return ranges_.size(); }

private:
    std::map<uint64_t, uint64_t> ranges_; // start -> end
};

class GuestAddressSpace {
public:
    // Manages [lo, hi) (page aligned) of `mem`; the brk starts at brk_start
    // (inside [lo, hi), page aligned).
    GuestAddressSpace(const memmap::GuestMemory& mem, uint64_t lo, uint64_t hi, uint64_t brk_start);

    // Linux brk(2): returns the new break, or the old one when refused.
    uint64_t brk(uint64_t want);

    // Anonymous mapping of len bytes (rounded up to pages): its address, or
    // nullopt when no free range is big enough (ENOMEM).
    std::optional<uint64_t> map_anywhere(uint64_t len);
    // MAP_FIXED: [addr, addr + len) must lie in the managed range (else
    // false); whatever was mapped there is replaced. `replace` false is
    // MAP_FIXED_NOREPLACE: false if any page is in use.
    bool map_fixed(uint64_t addr, uint64_t len, bool replace);
    // munmap: frees the pages of [addr, addr+len) inside the managed range
    // (the brk area excepted); pages outside it are left alone, as Linux
    // allows unmapping what was never mapped.
    void unmap(uint64_t addr, uint64_t len);
    // mremap of a mapping [old, old+old_len): in place if it can grow
    // there, else (may_move) to a new range with the contents copied.
    std::optional<uint64_t> remap(uint64_t old_addr, uint64_t old_len, uint64_t new_len, bool may_move);

    // Marks [start, end) used for good (the program's own pages).
    void reserve(uint64_t start, uint64_t end) {
        free_.remove(start, end);
        reserved_.add(start, end);
    }

    // MADV_DONTNEED on private anonymous memory: the pages of [addr,
    // addr+len) that brk and mmap handed out read as zero afterwards. The
    // program's own pages are left as they are (Linux would read them
    // again from the file: the same bytes for code and constants).
    void zero_in_use(uint64_t addr, uint64_t len);

    bool in_managed(uint64_t addr, uint64_t len) const;
    bool is_mapped(uint64_t addr, uint64_t len) const; // every page handed out
    uint64_t free_bytes() const { return free_.total(); }
    // For /proc/self/maps: the heap [brk start, break rounded up to a page),
    // the pieces of [start, end) still reserved for the program's pages, and
    // what mmap handed out (neither reserved nor heap), in address order.
    std::pair<uint64_t, uint64_t> heap() const { return {brk_start_, (brk_ + kPage - 1) & ~(kPage - 1)}; }
    std::vector<std::pair<uint64_t, uint64_t>> reserved_within(uint64_t start, uint64_t end) const;
    std::vector<std::pair<uint64_t, uint64_t>> mappings() const;
    uint64_t lo() const { return lo_; }
    uint64_t hi() const { return hi_; }

private:
    void hand_out(uint64_t start, uint64_t end); // free -> used, zeroing dirty pages
    void take_back(uint64_t start, uint64_t end);

    const memmap::GuestMemory& mem_;
    uint64_t lo_, hi_;
    uint64_t brk_start_, brk_;
    IntervalSet free_, dirty_;
    IntervalSet reserved_; // the program's pages: never handed out, never zeroed
};

// Rounds up to pages; nullopt when it wraps or len is 0.
std::optional<uint64_t> page_round_up(uint64_t len);

} // namespace kvmgpu::linux_abi
