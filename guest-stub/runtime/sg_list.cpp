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
    SgWriter sg(out, max_entries);
    SgResult result = SgResult::kOk;
    for (uint64_t done = 0; done < bytes;) {
        uint64_t step = translate(ctx, va + done, bytes - done, &sg);
        done += step;
        if (sg.full()) {
            result = SgResult::kTooMany;
            break;
        }
        if (step == 0) {
            result = SgResult::kUnmapped;
            break;
        }
    }
    *count = sg.count();
    return result;
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
