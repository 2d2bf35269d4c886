// Streams and events.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

// The context each live handle of a kind was made in, and its id, in a
// fixed table (the guest library allocates nothing): remembered at creation
// when there is room, forgotten at destruction and with its context.
template <typename Handle, unsigned N>
class Owners {
public:
    void remember(Handle h, CUcontext ctx, unsigned long long id = 0, unsigned flags = 0)
    {
        if (Entry* e = find(nullptr))
            *e = Entry{h, ctx, id, flags};
    }
    void forget(Handle h)
    {
        if (Entry* e = h != nullptr ? find(h) : nullptr)
            *e = Entry{};
    }
    void forget_context(CUcontext ctx)
    {
        for (Entry& e : entries_)
            if (e.handle != nullptr && e.ctx == ctx)
                e = Entry{};
    }
    // The context h was made in; null: not held (never made here, or past the table's room).
    CUcontext owner(Handle h)
    {
        const Entry* e = h != nullptr ? find(h) : nullptr;
        return e != nullptr ? e->ctx : nullptr;
    }
    // h's id as remembered; 0: not held.
    unsigned long long id(Handle h)
    {
        const Entry* e = h != nullptr ? find(h) : nullptr;
        return e != nullptr ? e->id : 0;
    }
    // h's creation flags as remembered (h held: owner(h) is not null).
    unsigned flags(Handle h)
    {
        const Entry* e = h != nullptr ? find(h) : nullptr;
        return e != nullptr ? e->flags : 0;
    }

private:
    struct Entry {
        Handle handle;
        CUcontext ctx;
        unsigned long long id;
        unsigned flags;
    };
    Entry* find(Handle h)
    {
        for (Entry& e : entries_)
            if (e.handle == h)
                return &e;
        return nullptr;
    }
    Entry entries_[N];
};

// Events: a stream may wait for an event of another context (another
// device). An event past the table is waited for only from its own context
// (from another the vGPU refuses it: CUDA_ERROR_INVALID_HANDLE).
Owners<CUevent, 1024> g_event_owners;
// Streams, for cuStreamGetCtx, cuStreamGetId and cuStreamGetFlags: one past the table is
// refused (CUDA_ERROR_NOT_SUPPORTED) rather than guessed.
Owners<CUstream, 4096> g_stream_owners;
// Stream ids, unique in the process as the driver's are (NVIDIA's libraries
// key per-stream state by them): a context's default stream has the
// context's id (cuCtxGetId: from 1, one per context), a created stream one
// counted from 2^32, past any context's.
constexpr unsigned long long kFirstCreatedStreamId = 1ull << 32;
unsigned long long g_last_stream_id = kFirstCreatedStreamId - 1;

// Not one this library made and still holds (or past the record's room):
// the vGPU's answer for a handle it does not know, else NOT_SUPPORTED.
CUresult unrecorded_stream(CUstream s)
{
    const CUresult r = call<VGPU_OP_STREAM_QUERY>({stream_arg(s)});
    const bool exists = r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY || r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return exists ? CUDA_ERROR_NOT_SUPPORTED : r;
}

} // namespace

namespace guest::cuda {
void events_forget(CUcontext ctx)
{
    g_event_owners.forget_context(ctx);
    g_stream_owners.forget_context(ctx);
}
} // namespace guest::cuda

KVMGPU_DRIVER_ENTRY(cuStreamCreate, 2000);
extern "C" CUresult cuStreamCreate(CUstream* stream, unsigned int flags)
{
    GUEST_API_LOCK();
    if (CUresult r = call_create<VGPU_OP_STREAM_CREATE>(flags, stream))
        return r;
    g_stream_owners.remember(*stream, current_context(), ++g_last_stream_id, flags);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuStreamSynchronize, 2000);
extern "C" CUresult cuStreamSynchronize(CUstream stream)
{
    GUEST_API_LOCK();
    return sync_point(call<VGPU_OP_STREAM_SYNCHRONIZE>({stream_arg(stream)}));
}

KVMGPU_DRIVER_ENTRY(cuStreamDestroy, 4000);
extern "C" CUresult cuStreamDestroy(CUstream stream)
{
    GUEST_API_LOCK();
    if (stream_arg(stream) == 0)
        return CUDA_ERROR_INVALID_HANDLE; // the default streams are not destroyed
    const CUresult r = call<VGPU_OP_STREAM_DESTROY>({handle_bits(stream)});
    if (r == CUDA_SUCCESS) {
        capture_stream_destroyed(stream);
        g_stream_owners.forget(stream);
    }
    return r;
}

KVMGPU_DRIVER_ENTRY(cuStreamGetCtx, 9020);
extern "C" CUresult cuStreamGetCtx(CUstream hStream, CUcontext* pctx)
{
    GUEST_API_LOCK();
    if (pctx == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (stream_arg(hStream) == 0) { // a default stream: the current context's
        *pctx = current_context();
        return *pctx != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    }
    const CUcontext owner = g_stream_owners.owner(hStream);
    if (owner == nullptr)
        return unrecorded_stream(hStream);
    *pctx = owner;
    return CUDA_SUCCESS;
}

namespace guest::cuda {
CUresult stream_id_in(CUcontext ctx, CUstream hStream, unsigned long long* id)
{
    if (id == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (stream_arg(hStream) == 0) // a default stream: its context's id
        return cuCtxGetId(ctx, id);
    const unsigned long long known = g_stream_owners.id(hStream);
    if (known == 0)
        return unrecorded_stream(hStream);
    *id = known;
    return CUDA_SUCCESS;
}
} // namespace guest::cuda

KVMGPU_DRIVER_ENTRY(cuStreamGetId, 12000);
extern "C" CUresult cuStreamGetId(CUstream hStream, unsigned long long* streamId)
{
    GUEST_API_LOCK();
    if (CUresult r = ready())
        return r;
    return stream_id_in(nullptr, hStream, streamId);
}

// The flags the stream was made with; a default stream's are 0 (assumed:
// the legacy and per-thread default streams both block with each other).
KVMGPU_DRIVER_ENTRY(cuStreamGetFlags, 5050);
extern "C" CUresult cuStreamGetFlags(CUstream hStream, unsigned int* flags)
{
    GUEST_API_LOCK();
    CUcontext owner = nullptr;
    if (flags == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = cuStreamGetCtx(hStream, &owner)) // the same record-based check (no query: captures go on)
        return r;
    *flags = stream_arg(hStream) == 0 ? 0 : g_stream_owners.flags(hStream);
    return CUDA_SUCCESS;
}

// The device of the stream's context.
KVMGPU_DRIVER_ENTRY(cuStreamGetDevice, 12080);
extern "C" CUresult cuStreamGetDevice(CUstream hStream, CUdevice* device)
{
    GUEST_API_LOCK();
    CUcontext owner = nullptr;
    if (device == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = cuStreamGetCtx(hStream, &owner))
        return r;
    return cuCtxGetDevice_v2(device, owner);
}

KVMGPU_DRIVER_ENTRY_AS(cuStreamGetCtx, 12050, cuStreamGetCtx_v2);
extern "C" CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx)
{
    GUEST_API_LOCK();
    if (pCtx == nullptr || pGreenCtx == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *pGreenCtx = nullptr;
    return cuStreamGetCtx(hStream, pCtx);
}

KVMGPU_DRIVER_ENTRY(cuEventCreate, 2000);
extern "C" CUresult cuEventCreate(CUevent* event, unsigned int flags)
{
    GUEST_API_LOCK();
    const CUresult r = call_create<VGPU_OP_EVENT_CREATE>(flags, event);
    if (r == CUDA_SUCCESS)
        g_event_owners.remember(*event, current_context());
    return r;
}

KVMGPU_DRIVER_ENTRY(cuEventRecord, 2000);
extern "C" CUresult cuEventRecord(CUevent event, CUstream stream)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_EVENT_RECORD>({handle_bits(event), stream_arg(stream)});
    capture_event_recorded(event, stream);
    return call_async(c);
}

KVMGPU_DRIVER_ENTRY(cuEventSynchronize, 2000);
extern "C" CUresult cuEventSynchronize(CUevent event)
{
    GUEST_API_LOCK();
    return sync_point(call<VGPU_OP_EVENT_SYNCHRONIZE>({handle_bits(event)}));
}

KVMGPU_DRIVER_ENTRY(cuEventElapsedTime, 12080);
extern "C" CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end)
{
    GUEST_API_LOCK();
    if (ms == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    Call c = command<VGPU_OP_EVENT_ELAPSED_TIME>({handle_bits(start), handle_bits(end)});
    uint64_t res[2];
    CUresult r = call_sync(c, res);
    if (r == CUDA_SUCCESS) {
        uint32_t bits = static_cast<uint32_t>(res[0]);
        memcpy(ms, &bits, sizeof bits);
    }
    return r;
}

KVMGPU_DRIVER_ENTRY(cuEventDestroy, 4000);
extern "C" CUresult cuEventDestroy(CUevent event)
{
    GUEST_API_LOCK();
    const CUresult r = call<VGPU_OP_EVENT_DESTROY>({handle_bits(event)});
    if (r == CUDA_SUCCESS)
        g_event_owners.forget(event);
    return r;
}

// Queries answer CUDA_ERROR_NOT_READY while work is pending and, as the
// driver's, may report an earlier queued call's error.
KVMGPU_DRIVER_ENTRY(cuStreamQuery, 2000);
extern "C" CUresult cuStreamQuery(CUstream stream)
{
    GUEST_API_LOCK();
    return sync_point(call<VGPU_OP_STREAM_QUERY>({stream_arg(stream)}));
}

KVMGPU_DRIVER_ENTRY(cuEventQuery, 2000);
extern "C" CUresult cuEventQuery(CUevent event)
{
    GUEST_API_LOCK();
    return sync_point(call<VGPU_OP_EVENT_QUERY>({handle_bits(event)}));
}

KVMGPU_DRIVER_ENTRY(cuStreamWaitEvent, 3020);
extern "C" CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
    GUEST_API_LOCK();
    const CUcontext owner = g_event_owners.owner(event);
    if (owner != nullptr && owner != current_context() && flags == 0) {
        // An event of another context: the driver orders the stream after
        // it on the GPU; here the guest waits for it, in its context, before
        // anything later is queued (stricter ordering, never wrong).
        if (CUresult r = cuCtxPushCurrent(owner))
            return r;
        const CUresult r = cuEventSynchronize(event);
        CUcontext popped;
        cuCtxPopCurrent(&popped);
        return r;
    }
    Call c = command<VGPU_OP_STREAM_WAIT_EVENT>({stream_arg(stream), handle_bits(event), flags});
    capture_stream_waits(stream, event);
    capture_note_work(stream);
    return call_async(c);
}

KVMGPU_DRIVER_ENTRY(cuEventRecordWithFlags, 11010);
extern "C" CUresult cuEventRecordWithFlags(CUevent event, CUstream stream, unsigned int flags)
{
    GUEST_API_LOCK();
    if (flags == CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_NOT_SUPPORTED; // a graph's event node: not offered
    if (flags != CU_EVENT_RECORD_DEFAULT)
        return CUDA_ERROR_INVALID_VALUE;
    return cuEventRecord(event, stream);
}

// The priority range is [0, 0] (cuCtxGetStreamPriorityRange): any priority
// is clamped to 0, as the driver clamps one outside its range.
KVMGPU_DRIVER_ENTRY(cuStreamCreateWithPriority, 5050);
extern "C" CUresult cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int)
{
    GUEST_API_LOCK();
    return cuStreamCreate(stream, flags);
}

KVMGPU_DRIVER_ENTRY(cuStreamGetPriority, 5050);
extern "C" CUresult cuStreamGetPriority(CUstream stream, int* priority)
{
    GUEST_API_LOCK();
    if (priority == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    // The handle is checked as cuStreamGetCtx checks it, against this
    // library's own record, not with a query: a query would end a capture in
    // progress on the stream, and the driver allows this call there (cuBLAS
    // asks it inside a capture). A default stream needs a current context.
    CUcontext owner = nullptr;
    if (CUresult r = cuStreamGetCtx(stream, &owner))
        return r;
    *priority = 0;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuLaunchHostFunc, 10000);
extern "C" CUresult cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* userData)
{
    GUEST_API_LOCK();
    if (fn == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    // Captured: the graph's host step, run after its device work (guest_cuda_graphs.h).
    if (const uint64_t id = capture_of(stream)) {
        return host_step_add(capture_owner(id), 0, fn, userData) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (CUresult r = cuStreamSynchronize(stream))
        return r;
    const guest::platform::ApiUnlocked unlocked; // the function may wait for threads that call CUDA
    fn(userData);
    return CUDA_SUCCESS;
}

// The callback gets the stream's status, as the driver gives it (flags
// must be 0, as cuda.h says).
KVMGPU_DRIVER_ENTRY(cuStreamAddCallback, 5000);
extern "C" CUresult cuStreamAddCallback(CUstream stream, CUstreamCallback callback, void* userData,
                                        unsigned int flags)
{
    GUEST_API_LOCK();
    if (callback == nullptr || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    const CUresult status = cuStreamSynchronize(stream);
    if (status == CUDA_ERROR_NOT_INITIALIZED || status == CUDA_ERROR_INVALID_HANDLE)
        return status; // no stream to call back on
    const guest::platform::ApiUnlocked unlocked; // the callback may wait for threads that call CUDA
    callback(stream, status, userData);
    return status;
}

namespace {
// cuStreamWriteValue*/WaitValue* (VGPU_OP_STREAM_WRITE_VALUE / _WAIT_VALUE):
// flags and alignment refused here, as the driver refuses them at the call;
// the address the vGPU checks (this VM's device memory).
CUresult stream_value(uint16_t op, CUstream stream, CUdeviceptr addr, uint64_t value, unsigned flags, unsigned bytes)
{
    const unsigned known = op == VGPU_OP_STREAM_WRITE_VALUE
                               ? CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER
                               : CU_STREAM_WAIT_VALUE_NOR | CU_STREAM_WAIT_VALUE_FLUSH; // NOR = every condition bit
    if ((flags & ~known) != 0 || addr % bytes != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (capture_of(stream) != 0)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    Call c;
    c.op = op;
    c.set_args(vgpu_args_stream_value{stream_arg(stream), addr, value, flags, bytes});
    return call_async(c);
}
} // namespace

KVMGPU_DRIVER_ENTRY(cuStreamWriteValue32, 11070);
extern "C" CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
    GUEST_API_LOCK();
    return stream_value(VGPU_OP_STREAM_WRITE_VALUE, stream, addr, value, flags, 4);
}

KVMGPU_DRIVER_ENTRY(cuStreamWriteValue64, 11070);
extern "C" CUresult cuStreamWriteValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags)
{
    GUEST_API_LOCK();
    return stream_value(VGPU_OP_STREAM_WRITE_VALUE, stream, addr, value, flags, 8);
}

KVMGPU_DRIVER_ENTRY(cuStreamWaitValue32, 11070);
extern "C" CUresult cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
    GUEST_API_LOCK();
    return stream_value(VGPU_OP_STREAM_WAIT_VALUE, stream, addr, value, flags, 4);
}

KVMGPU_DRIVER_ENTRY(cuStreamWaitValue64, 11070);
extern "C" CUresult cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags)
{
    GUEST_API_LOCK();
    return stream_value(VGPU_OP_STREAM_WAIT_VALUE, stream, addr, value, flags, 8);
}
