// Contexts: each thread's context stack, the contexts this guest made or
// retained, and each device's primary context. The vGPU keeps one current
// context per VM: a change of the calling thread's top is sent to it
// (VGPU_OP_CTX_SET_CURRENT) before the call returns, and a call from a
// thread whose top is not what the vGPU has sends it first
// (match_current, from every submission), so each thread's calls run in
// its own context, as the driver's per-thread current context does.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

constexpr int kMaxStackDepth = 64;
constexpr int kMaxContexts = 256;

struct ContextRecord {
    CUcontext ctx; // nullptr: a free record
    CUdevice device;
    unsigned flags;
    bool primary;
    unsigned long long id; // cuCtxGetId's: unique in this process, from 1
};

struct ContextStack {
    CUcontext stack[kMaxStackDepth];
    int depth = 0;
};
struct Contexts {
    ContextRecord records[kMaxContexts];
};

Contexts g_contexts;

// cuDevicePrimaryCtxGetState's answer per device, kept once asked: NVIDIA's
// runtime asks it on most of its calls. The state changes only through this
// library's retain, release, reset and set-flags, which forget it.
constexpr int kCachedPrimaryStates = 64;
struct PrimaryState {
    bool known;
    unsigned flags;
    int active;
};
PrimaryState g_primary_states[kCachedPrimaryStates];

void forget_primary_state(CUdevice dev)
{
    if (dev >= 0 && dev < kCachedPrimaryStates)
        g_primary_states[dev].known = false;
}
GUEST_PER_THREAD ContextStack t_stack;
CUcontext g_sent = nullptr; // the vGPU's current context, as last set (under the API lock)
unsigned long long g_last_context_id = 0;

ContextRecord* record_of(CUcontext ctx)
{
    for (ContextRecord& r : g_contexts.records)
        if (r.ctx == ctx && ctx != nullptr)
            return &r;
    return nullptr;
}

ContextRecord* add_record(CUcontext ctx, CUdevice device, unsigned flags, bool primary)
{
    if (ContextRecord* r = record_of(ctx))
        return r;
    for (ContextRecord& r : g_contexts.records)
        if (r.ctx == nullptr) {
            r = ContextRecord{ctx, device, flags, primary, ++g_last_context_id};
            return &r;
        }
    return nullptr;
}

CUcontext top() { return t_stack.depth > 0 ? t_stack.stack[t_stack.depth - 1] : nullptr; }

CUresult send_current(CUcontext ctx)
{
    Call c = command<VGPU_OP_CTX_SET_CURRENT>({handle_bits(ctx)});
    const CUresult r = call_sync(c);
    if (r == CUDA_SUCCESS)
        g_sent = ctx;
    return r;
}

// After the vGPU freed what `ctx` made: forget this guest's records of it.
void forget_objects_of(CUcontext ctx)
{
    allocations_forget(ctx);
    managed_forget(ctx);
    events_forget(ctx);
}

// ... for device dev's primary context (its last release, its reset).
void forget_primary_objects(CUdevice dev)
{
    for (const ContextRecord& r : g_contexts.records)
        if (r.ctx != nullptr && r.primary && r.device == dev)
            forget_objects_of(r.ctx);
}

} // namespace

namespace guest::cuda {
CUcontext current_context() { return top(); }
CUresult match_current()
{
    return top() == g_sent ? CUDA_SUCCESS : send_current(top());
}
} // namespace guest::cuda

KVMGPU_DRIVER_ENTRY_AS(cuCtxCreate, 12050, cuCtxCreate_v4);
extern "C" CUresult cuCtxCreate(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (pctx == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    // Empty parameters (as NVIDIA's samples pass them) ask for nothing;
    // execution affinity and CIG are not offered.
    if (params != nullptr && (params->numExecAffinityParams != 0 || params->execAffinityParams != nullptr ||
                              params->cigParams != nullptr))
        return CUDA_ERROR_NOT_SUPPORTED;
    if (t_stack.depth == kMaxStackDepth)
        return CUDA_ERROR_OUT_OF_MEMORY;
    Call c = command<VGPU_OP_CTX_CREATE>({flags, device_arg(dev)});
    CUcontext ctx;
    if (CUresult r = call_result(c, &ctx))
        return r;
    if (add_record(ctx, dev, flags, false) == nullptr) {
        Call undo = command<VGPU_OP_CTX_DESTROY>({handle_bits(ctx)});
        call_sync(undo);
        send_current(top()); // the vGPU made the new one current
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    t_stack.stack[t_stack.depth++] = ctx; // the vGPU made it current
    g_sent = ctx;
    *pctx = ctx;
    return CUDA_SUCCESS;
}

// The driver pops a destroyed context off the stack; here it leaves the
// stack wherever it is, and the new top becomes current.
KVMGPU_DRIVER_ENTRY(cuCtxDestroy, 4000);
extern "C" CUresult cuCtxDestroy(CUcontext ctx)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (ctx == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const CUcontext was_current = top();
    Call c = command<VGPU_OP_CTX_DESTROY>({handle_bits(ctx)});
    if (CUresult r = call_sync(c))
        return r;
    if (g_sent == ctx)
        g_sent = nullptr; // the vGPU has no current context now
    int kept = 0;
    for (int i = 0; i < t_stack.depth; ++i)
        if (t_stack.stack[i] != ctx)
            t_stack.stack[kept++] = t_stack.stack[i];
    t_stack.depth = kept;
    if (ContextRecord* r = record_of(ctx))
        r->ctx = nullptr;
    forget_objects_of(ctx);
    if (was_current != top() && top() != nullptr)
        return send_current(top());
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuCtxPushCurrent, 4000);
extern "C" CUresult cuCtxPushCurrent(CUcontext ctx)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (ctx == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (t_stack.depth == kMaxStackDepth)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (CUresult r = send_current(ctx))
        return r;
    t_stack.stack[t_stack.depth++] = ctx;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuCtxPopCurrent, 4000);
extern "C" CUresult cuCtxPopCurrent(CUcontext* pctx)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (t_stack.depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    const CUcontext popped = t_stack.stack[t_stack.depth - 1];
    if (CUresult r = send_current(t_stack.depth > 1 ? t_stack.stack[t_stack.depth - 2] : nullptr))
        return r;
    --t_stack.depth;
    if (pctx != nullptr)
        *pctx = popped;
    return CUDA_SUCCESS;
}

// Replaces the top of the stack; nullptr pops it (nothing on an empty stack).
KVMGPU_DRIVER_ENTRY(cuCtxSetCurrent, 4000);
extern "C" CUresult cuCtxSetCurrent(CUcontext ctx)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (ctx == nullptr)
        return t_stack.depth == 0 ? CUDA_SUCCESS : cuCtxPopCurrent(nullptr);
    if (CUresult r = send_current(ctx))
        return r;
    if (t_stack.depth == 0)
        t_stack.depth = 1;
    t_stack.stack[t_stack.depth - 1] = ctx;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuCtxGetCurrent, 4000);
extern "C" CUresult cuCtxGetCurrent(CUcontext* pctx)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (pctx == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = top();
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuCtxGetDevice, 2000);
extern "C" CUresult cuCtxGetDevice(CUdevice* device)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (device == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const ContextRecord* r = record_of(top());
    if (r == nullptr)
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = r->device;
    return CUDA_SUCCESS;
}

// A context's process-unique id (NVIDIA's libraries key their per-context
// state by it); `ctx` null: the current context.
KVMGPU_DRIVER_ENTRY(cuCtxGetId, 12000);
extern "C" CUresult cuCtxGetId(CUcontext ctx, unsigned long long* id)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (id == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const ContextRecord* r = record_of(ctx != nullptr ? ctx : top());
    if (r == nullptr)
        return CUDA_ERROR_INVALID_CONTEXT;
    *id = r->id;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuCtxGetApiVersion, 3020);
extern "C" CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int* version)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (version == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (record_of(ctx != nullptr ? ctx : top()) == nullptr)
        return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuCtxGetFlags, 7000);
extern "C" CUresult cuCtxGetFlags(unsigned int* flags)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (flags == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const ContextRecord* r = record_of(top());
    if (r == nullptr)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!r->primary) {
        *flags = r->flags;
        return CUDA_SUCCESS;
    }
    int active;
    return cuDevicePrimaryCtxGetState(r->device, flags, &active);
}

KVMGPU_DRIVER_ENTRY(cuDevicePrimaryCtxRetain, 7000);
extern "C" CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (pctx == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    forget_primary_state(dev);
    Call c = command<VGPU_OP_PRIMARY_CTX_RETAIN>({device_arg(dev)});
    CUcontext ctx;
    if (CUresult r = call_result(c, &ctx))
        return r;
    if (add_record(ctx, dev, 0, true) == nullptr) {
        cuDevicePrimaryCtxRelease(dev);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pctx = ctx;
    return CUDA_SUCCESS;
}

// The last release frees what was made in the primary context. 7000 is the
// form before CUDA 11.0, which NVIDIA's cudart 13 still asks for (without
// it cudaDeviceReset fails with cudaErrorCallRequiresNewerDriver): the same
// signature, and the same behaviour here.
KVMGPU_DRIVER_ENTRY(cuDevicePrimaryCtxRelease, 7000);
KVMGPU_DRIVER_ENTRY(cuDevicePrimaryCtxRelease, 11000);
extern "C" CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    forget_primary_state(dev);
    Call c = command<VGPU_OP_PRIMARY_CTX_RELEASE>({device_arg(dev)});
    uint64_t res[2];
    if (CUresult r = call_sync(c, res))
        return r;
    if (res[0] == 0)
        forget_primary_objects(dev);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuDevicePrimaryCtxGetState, 7000);
extern "C" CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    if (flags == nullptr || active == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const bool cacheable = dev >= 0 && dev < kCachedPrimaryStates;
    if (cacheable && g_primary_states[dev].known) {
        *flags = g_primary_states[dev].flags;
        *active = g_primary_states[dev].active;
        return CUDA_SUCCESS;
    }
    Call c = command<VGPU_OP_PRIMARY_CTX_STATE>({device_arg(dev)});
    uint64_t res[2];
    if (CUresult r = call_sync(c, res))
        return r;
    *flags = static_cast<unsigned>(res[0]);
    *active = static_cast<int>(res[1]);
    if (cacheable)
        g_primary_states[dev] = PrimaryState{true, *flags, *active};
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuDevicePrimaryCtxSetFlags, 11000);
extern "C" CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    forget_primary_state(dev);
    Call c = command<VGPU_OP_PRIMARY_CTX_SET_FLAGS>({device_arg(dev), flags});
    return call_sync(c);
}

// 7000: as cuDevicePrimaryCtxRelease's (cudaDeviceReset calls it).
KVMGPU_DRIVER_ENTRY(cuDevicePrimaryCtxReset, 7000);
KVMGPU_DRIVER_ENTRY(cuDevicePrimaryCtxReset, 11000);
extern "C" CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    forget_primary_state(dev);
    Call c = command<VGPU_OP_PRIMARY_CTX_RESET>({device_arg(dev)});
    if (CUresult r = call_sync(c))
        return r;
    forget_primary_objects(dev);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuDeviceCanAccessPeer, 4000);
extern "C" CUresult cuDeviceCanAccessPeer(int* can_access, CUdevice dev, CUdevice peer)
{
    GUEST_API_LOCK();
    if (can_access == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_DEVICE_CAN_ACCESS_PEER>({device_arg(dev), device_arg(peer)});
    return call_result(c, can_access);
}

KVMGPU_DRIVER_ENTRY(cuCtxEnablePeerAccess, 4000);
extern "C" CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_CTX_ENABLE_PEER_ACCESS>({handle_bits(peer), flags});
    return call_sync(c);
}

KVMGPU_DRIVER_ENTRY(cuCtxDisablePeerAccess, 4000);
extern "C" CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_CTX_DISABLE_PEER_ACCESS>({handle_bits(peer)});
    return call_sync(c);
}

namespace {
// op with ctx current (nullptr: the current context), the stack as it was after.
template <class Op>
CUresult in_context(CUcontext ctx, Op op)
{
    if (ctx == nullptr || ctx == current_context())
        return op();
    if (CUresult r = cuCtxPushCurrent(ctx))
        return r;
    const CUresult r = op();
    CUcontext popped;
    cuCtxPopCurrent(&popped);
    return r;
}
} // namespace

// CUDA 13's forms that name the context (cuGetProcAddress hands them out
// for versions 13000 and later).
KVMGPU_DRIVER_ENTRY_AS(cuCtxSynchronize, 13000, cuCtxSynchronize_v2);
extern "C" CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    GUEST_API_LOCK();
    return in_context(ctx, [] { return cuCtxSynchronize(); });
}

KVMGPU_DRIVER_ENTRY_AS(cuCtxGetDevice, 13000, cuCtxGetDevice_v2);
extern "C" CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx)
{
    GUEST_API_LOCK();
    return in_context(ctx, [device] { return cuCtxGetDevice(device); });
}
