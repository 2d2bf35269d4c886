// Helpers the benchmark guests (bandwidth, calls) share beyond the pure
// ones in bench_support.h: result statuses as text, cmdline values with
// defaults.
#pragma once

#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/runtime/runtime.h"

namespace guest {

// "ok", "not_supported", else "error:<CUresult name>" in buf.
inline const char* bench_status_text(CUresult r, char* buf, size_t len)
{
    if (r == CUDA_SUCCESS)
        return "ok";
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        return "not_supported";
    const char* name = nullptr;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = "unnamed";
    snformat(buf, len, "error:%s", name);
    return buf;
}

// The cmdline value of key, or def when the key is absent or empty.
inline StrView cmdline_value_or(const char* key, const char* def)
{
    StrView v;
    if (cmdline().find(key, &v) && v.len != 0)
        return v;
    return StrView{def, strlen(def)};
}

} // namespace guest
