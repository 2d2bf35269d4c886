// Builds a vGPU scatter-gather list (struct vgpu_sg_entry, vgpu_abi.h) for
// a virtual range: translates page by page and merges physically contiguous
// neighbours into one entry. Pure: the translation is a callback, so the
// unit tests drive it from a mock page table.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kvmtool-gpu/abi/vgpu_abi.h"

namespace guest {

// Translates va: *pa = its physical address, *contig = bytes from va that are
// physically contiguous with it (at least 1; normally to the page end).
// false if va is unmapped.
using TranslateFn = bool (*)(void* ctx, uint64_t va, uint64_t* pa, uint64_t* contig);

enum class SgResult {
    kOk,
    kUnmapped,    // some page of the range is not mapped
    kTooMany,     // more than max_entries entries needed
    kBadArgument, // bytes == 0, range wraps, or no output space
};

// Fills out[0, *count) for [va, va + bytes). max_entries bounds the output.
SgResult build_sg_list(uint64_t va, uint64_t bytes, TranslateFn translate, void* ctx,
                       vgpu_sg_entry* out, uint64_t max_entries, uint64_t* count);

const char* sg_result_name(SgResult r);

} // namespace guest
