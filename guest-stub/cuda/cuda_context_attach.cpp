// cuCtxAttach and cuCtxDetach: deprecated since CUDA 4.0 and still in the
// driver (NVIDIA's matrixMulDynlinkJIT looks both up). A context's usage
// count: cuCtxCreate's makes one, each attach adds one, each detach takes
// one away, and the last detach destroys the context.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/platform/api_lock.h"

namespace {

// Attaches beyond the creator's, per context; a full table refuses.
constexpr int kMostAttached = 64;
struct Attached {
    CUcontext ctx;
    unsigned extra;
};
Attached g_attached[kMostAttached];

Attached* entry_of(CUcontext ctx, bool make)
{
    Attached* free_entry = nullptr;
    for (Attached& a : g_attached) {
        if (a.ctx == ctx && a.extra > 0)
            return &a;
        if (a.extra == 0 && free_entry == nullptr)
            free_entry = &a;
    }
    if (!make || free_entry == nullptr)
        return nullptr;
    free_entry->ctx = ctx;
    return free_entry;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuCtxAttach, 2000);
extern "C" CUresult cuCtxAttach(CUcontext* pctx, unsigned int flags)
{
    GUEST_API_LOCK();
    if (pctx == nullptr || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext current = nullptr;
    if (CUresult r = cuCtxGetCurrent(&current))
        return r;
    if (current == nullptr)
        return CUDA_ERROR_INVALID_CONTEXT;
    Attached* a = entry_of(current, true);
    if (a == nullptr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ++a->extra;
    *pctx = current;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuCtxDetach, 2000);
extern "C" CUresult cuCtxDetach(CUcontext ctx)
{
    GUEST_API_LOCK();
    CUcontext current = nullptr;
    if (CUresult r = cuCtxGetCurrent(&current))
        return r;
    if (ctx == nullptr || ctx != current)
        return CUDA_ERROR_INVALID_CONTEXT; // it must be current, as the driver asks
    if (Attached* a = entry_of(ctx, false)) {
        --a->extra;
        return CUDA_SUCCESS;
    }
    return cuCtxDestroy(ctx);
}
