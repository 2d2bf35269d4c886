// Bump frame allocator (see frame_alloc.h).
#include "guest-stub/runtime/frame_alloc.h"

namespace guest {
namespace {
bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
} // namespace

bool FrameAllocator::init(uint64_t base, uint64_t end)
{
    if (base > UINT64_MAX - (kPage4K - 1))
        return false;
    uint64_t b = (base + kPage4K - 1) & ~(kPage4K - 1);
    uint64_t e = end & ~(kPage4K - 1);
    if (e <= b)
        return false;
    base_ = next_ = b;
    end_ = e;
    return true;
}

bool FrameAllocator::checked_size(uint64_t bytes, uint64_t align, uint64_t* size) const
{
    if (bytes == 0 || !is_pow2(align) || align < kPage4K || end_ == 0 || bytes > end_ - next_)
        return false;
    *size = (bytes + kPage4K - 1) & ~(kPage4K - 1); // cannot wrap: bytes < 2^64 - 4K here
    return true;
}

bool FrameAllocator::alloc(uint64_t bytes, uint64_t align, uint64_t* phys)
{
    uint64_t size;
    if (!checked_size(bytes, align, &size))
        return false;
    if (next_ > UINT64_MAX - (align - 1))
        return false;
    uint64_t start = (next_ + align - 1) & ~(align - 1);
    if (start > end_ || size > end_ - start)
        return false;
    next_ = start + size;
    *phys = start;
    return true;
}

bool FrameAllocator::alloc_top(uint64_t bytes, uint64_t align, uint64_t* phys)
{
    uint64_t size;
    if (!checked_size(bytes, align, &size))
        return false;
    uint64_t start = (end_ - size) & ~(align - 1);
    if (start < next_)
        return false;
    end_ = start;
    *phys = start;
    return true;
}

bool FrameAllocator::release(uint64_t mark)
{
    if (mark < base_ || mark > next_)
        return false;
    next_ = mark;
    return true;
}

} // namespace guest
