// CONTEXT_LOCAL_STORAGE_INTERFACE_V0301: cudart keeps its per-context state
// in the driver, keyed by (context, its state manager). The table has no
// size word: [0] stores, [1] is called on teardown, [2] looks up. A null
// context means the calling thread's current one. The destructor callback
// cudart passes is kept but not called: contexts here are not torn down
// under a running cudart (docs/libcuda.md).
#include <stdlib.h>

#include "guest-stub/libcuda/export_tables.h"
#include "guest-stub/platform/api_lock.h"

namespace guest::libcuda {
namespace {

constexpr char kName[] = "CONTEXT_LOCAL_STORAGE_INTERFACE_V0301";

using Destructor = void (*)(CUcontext, void*, void*);

struct Value {
    CUcontext ctx;
    void* manager;
    void* state;
    Destructor destructor;
    Value* next;
};
Value* g_values = nullptr;

CUcontext resolve(CUcontext ctx)
{
    if (ctx == nullptr && cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
        return nullptr;
    return ctx;
}

Value** find(CUcontext ctx, void* manager)
{
    for (Value** v = &g_values; *v != nullptr; v = &(*v)->next)
        if ((*v)->ctx == ctx && (*v)->manager == manager)
            return v;
    return nullptr;
}

// [0]
CUresult put(CUcontext ctx, void* manager, void* state, Destructor destructor)
{
    GUEST_API_LOCK();
    ctx = resolve(ctx);
    if (ctx == nullptr)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (Value** v = find(ctx, manager)) {
        (*v)->state = state;
        (*v)->destructor = destructor;
        return CUDA_SUCCESS;
    }
    auto* v = static_cast<Value*>(malloc(sizeof(Value)));
    if (v == nullptr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *v = Value{ctx, manager, state, destructor, g_values};
    g_values = v;
    return CUDA_SUCCESS;
}

// [1]: (context, manager) as far as is known; forgets the value.
CUresult remove(CUcontext ctx, void* manager)
{
    GUEST_API_LOCK();
    ctx = resolve(ctx);
    if (Value** v = find(ctx, manager)) {
        Value* gone = *v;
        *v = gone->next;
        free(gone);
    }
    return CUDA_SUCCESS;
}

// [2]: CUDA_ERROR_INVALID_VALUE where nothing is stored (cudart then makes
// its state and stores it with [0]).
CUresult get(void** state, CUcontext ctx, void* manager)
{
    GUEST_API_LOCK();
    if (state == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *state = nullptr;
    ctx = resolve(ctx);
    Value** v = ctx != nullptr ? find(ctx, manager) : nullptr;
    if (v == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *state = (*v)->state;
    return CUDA_SUCCESS;
}

} // namespace

extern const Entry kContextLocalStorage[] = {
    KVMGPU_ENTRY(put),
    KVMGPU_ENTRY(remove),
    KVMGPU_ENTRY(get),
    KVMGPU_UNKNOWN(kName, 3),
};

} // namespace guest::libcuda
