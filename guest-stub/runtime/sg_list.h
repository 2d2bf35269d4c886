// Builds a vGPU scatter-gather list (struct vgpu_sg_entry, vgpu_abi.h) for
// a virtual range and merges physically contiguous neighbours into one
// entry. Pure: the translation is a callback, so the unit tests drive it
// from a mock page table.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kvmtool-gpu/abi/vgpu_abi.h"

namespace guest {

// The list being filled: out[0, count()), at most max_entries entries.
class SgWriter {
public:
    SgWriter(vgpu_sg_entry* out, uint64_t max_entries) : out_(out), max_(max_entries) {}

    // Adds [pa, pa + len), len > 0, into the last entry if that ends at pa.
    // false if it needs a new entry and none is left; full() from then on.
    bool add(uint64_t pa, uint64_t len)
    {
        if (n_ > 0 && end_ == pa) {
            out_[n_ - 1].len += len;
            end_ += len;
            return true;
        }
        if (n_ == max_) {
            full_ = true;
            return false;
        }
        out_[n_].gpa = pa;
        out_[n_].len = len;
        ++n_;
        end_ = pa + len;
        return true;
    }
    uint64_t count() const { return n_; }
    bool full() const { return full_; }

private:
    vgpu_sg_entry* out_;
    uint64_t max_;
    uint64_t n_ = 0;
    uint64_t end_ = 0; // where out_[n_ - 1] ends
    bool full_ = false;
};

// One translation step: appends to sg the physical pieces of a prefix of
// [va, va + bytes), bytes > 0, as far as it reaches at once (a page, a run
// of a page table, ...), and returns that prefix's length. 0 when it
// appended nothing: va is unmapped, or sg is full. Called per step rather
// than per page so that a page-table walk is shared by many pages.
using TranslateFn = uint64_t (*)(void* ctx, uint64_t va, uint64_t bytes, SgWriter* sg);

// The step of a translation that knows one piece: va is at pa, and the
// contig bytes from there are physically contiguous.
inline uint64_t sg_add_piece(SgWriter* sg, uint64_t pa, uint64_t contig, uint64_t bytes)
{
    uint64_t len = contig < bytes ? contig : bytes;
    return len != 0 && sg->add(pa, len) ? len : 0;
}

enum class SgResult {
    kOk,
    kUnmapped,    // some page of the range is not mapped
    kTooMany,     // more than max_entries entries needed
    kBadArgument, // bytes == 0, range wraps, or no output space
};

// Fills out[0, *count) for [va, va + bytes). max_entries bounds the output;
// on kTooMany (or kUnmapped) out[0, *count) covers a prefix of the range.
SgResult build_sg_list(uint64_t va, uint64_t bytes, TranslateFn translate, void* ctx,
                       vgpu_sg_entry* out, uint64_t max_entries, uint64_t* count);

const char* sg_result_name(SgResult r);

} // namespace guest
