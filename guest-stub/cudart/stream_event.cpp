// Streams and events: the runtime's handles are the guest Driver API's
// (cudaStream_t and CUstream are both CUstream_st*, cudaEvent_t and CUevent
// both CUevent_st*), so these map one to one. A query that finds work still
// running answers cudaErrorNotReady without making it the last error.
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

extern "C" {

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags)
{
    GUEST_API_LOCK();
    if (s == nullptr || (flags & ~(unsigned)cudaStreamNonBlocking) != 0)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    return record(cuStreamCreate(s, flags)); // cudaStreamNonBlocking == CU_STREAM_NON_BLOCKING
}

cudaError_t cudaStreamCreate(cudaStream_t* s)
{
    GUEST_API_LOCK();
    return cudaStreamCreateWithFlags(s, cudaStreamDefault);
}

// Priorities are hints; the vGPU's streams all have the default one.
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned flags, int)
{
    GUEST_API_LOCK();
    return cudaStreamCreateWithFlags(s, flags);
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    const CUresult r = cuStreamDestroy(s);
    if (r == CUDA_SUCCESS)
        forget_stream_attributes(s);
    return record(r);
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuStreamSynchronize(s));
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuStreamQuery(s));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned flags)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuStreamWaitEvent(s, ev, flags));
}

// Host functions on a stream: the guest Driver API's cuLaunchHostFunc,
// which waits for the stream and runs the function before returning.
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* user_data)
{
    GUEST_API_LOCK();
    if (fn == nullptr)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    return record(cuLaunchHostFunc(s, fn, user_data));
}

// The same, given the stream's status (flags must be 0, as CUDA says).
cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* user_data, unsigned flags)
{
    GUEST_API_LOCK();
    if (cb == nullptr || flags != 0)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    const cudaError_t status = from_driver(cuStreamSynchronize(s));
    cb(s, status, user_data);
    return record(status);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* ev, unsigned flags)
{
    GUEST_API_LOCK();
    if (ev == nullptr)
        return record(cudaErrorInvalidValue);
    if ((flags & cudaEventInterprocess) != 0)
        return record(cudaErrorNotSupported); // one process: nothing to share with
    if ((flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming)) != 0)
        return record(cudaErrorInvalidValue);
    if (cudaError_t e = enter())
        return e;
    // Blocking sync is a host-side wait mode: the guest always polls the ring.
    return record(cuEventCreate(ev, flags & cudaEventDisableTiming)); // == CU_EVENT_DISABLE_TIMING
}

cudaError_t cudaEventCreate(cudaEvent_t* ev)
{
    GUEST_API_LOCK();
    return cudaEventCreateWithFlags(ev, cudaEventDefault);
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuEventRecord(ev, s));
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuEventSynchronize(ev));
}

cudaError_t cudaEventQuery(cudaEvent_t ev)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuEventQuery(ev));
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuEventElapsedTime(ms, start, end));
}

cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuEventDestroy(ev));
}

} // extern "C"
