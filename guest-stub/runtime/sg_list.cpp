// Scatter-gather list builder (see sg_list.h).
#include "guest-stub/runtime/sg_list.h"

namespace guest {

SgResult build_sg_list(uint64_t va, uint64_t bytes, TranslateFn translate, void* ctx,
                       vgpu_sg_entry* out, uint64_t max_entries, uint64_t* count)
{
    *count = 0;
    if (bytes == 0 || va > UINT64_MAX - bytes || out == nullptr || max_entries == 0 ||
        translate == nullptr)
        return SgResult::kBadArgument;
    uint64_t n = 0;
    uint64_t done = 0;
    while (done < bytes) {
        uint64_t pa, contig;
        if (!translate(ctx, va + done, &pa, &contig) || contig == 0)
            return SgResult::kUnmapped;
        uint64_t len = contig < bytes - done ? contig : bytes - done;
        if (n > 0 && out[n - 1].gpa + out[n - 1].len == pa) {
            out[n - 1].len += len;
        } else {
            if (n == max_entries)
                return SgResult::kTooMany;
            out[n].gpa = pa;
            out[n].len = len;
            ++n;
        }
        done += len;
        *count = n;
    }
    return SgResult::kOk;
}

const char* sg_result_name(SgResult r)
{
    switch (r) {
    case SgResult::kOk: return "ok";
    case SgResult::kUnmapped: return "unmapped page";
    case SgResult::kTooMany: return "too many entries";
    case SgResult::kBadArgument: return "bad argument";
    }
    return "?";
}

} // namespace guest
