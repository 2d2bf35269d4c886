// Physical frame allocator for guest RAM [base, end): a bump allocator with
// explicit alignment and mark/release (a stack discipline, enough for guest
// programs that set up buffers, measure, and drop them all). Every request
// is checked against the bounds with overflow-safe arithmetic; nothing is
// ever handed out twice. Pure: also compiled on the host for the unit tests.
#pragma once

#include <stdint.h>

namespace guest {

constexpr uint64_t kPage4K = 4096;
constexpr uint64_t kPage2M = 2ull << 20;

class FrameAllocator {
public:
    FrameAllocator() = default;
    // Manages [align_up(base, 4K), align_down(end, 4K)). false if empty.
    bool init(uint64_t base, uint64_t end);

    // Reserves bytes (rounded up to 4 KiB) at an address aligned to align
    // (a power of two >= 4 KiB). false, and no change, if it does not fit or
    // the arguments are invalid (bytes == 0, bad align).
    bool alloc(uint64_t bytes, uint64_t align, uint64_t* phys);

    // Like alloc, but from the top of the range down; never released (for
    // what must outlive any mark: the vGPU ring, SG-list pool).
    bool alloc_top(uint64_t bytes, uint64_t align, uint64_t* phys);

    // Everything allocated (by alloc) after mark() is released by release(mark).
    uint64_t mark() const { return next_; }
    bool release(uint64_t mark);

    uint64_t base() const { return base_; }
    uint64_t end() const { return end_; } // end of what alloc may use
    uint64_t used_bytes() const { return next_ - base_; }
    uint64_t free_bytes() const { return end_ - next_; }

private:
    // Validates a request; *size = bytes rounded up to 4 KiB.
    bool checked_size(uint64_t bytes, uint64_t align, uint64_t* size) const;

    uint64_t base_ = 0;
    uint64_t end_ = 0;  // moves down with alloc_top
    uint64_t next_ = 0;
};

} // namespace guest
