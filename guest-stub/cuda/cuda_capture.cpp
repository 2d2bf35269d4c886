// Stream capture: the VMM's backend captures the stream's work (on CUDA,
// the driver's own capture); this library keeps which streams capture, for
// its copies and host functions (graph_host_steps.h).
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/graph_nodes.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

// STREAM_CAPTURE_INFO: the device's word on the stream.
CUresult device_capture_info(CUstream stream, CUstreamCaptureStatus* status, uint64_t* id)
{
    Call c = command<VGPU_OP_STREAM_CAPTURE_INFO>({stream_arg(stream)});
    uint64_t res[2];
    const CUresult r = call_sync(c, res);
    if (r == CUDA_SUCCESS) {
        *status = static_cast<CUstreamCaptureStatus>(res[0]);
        *id = res[1];
    }
    return r;
}

// The stream's capture status and id. While no capture can be open in this
// process the answer is known without a round trip (libraries ask it on
// every call: cuBLASLt per matmul, PyTorch's allocator); the handle is then
// checked against this library's stream records, as cuStreamGetCtx does.
CUresult capture_info(CUstream stream, CUstreamCaptureStatus* status, uint64_t* id)
{
    if (capture_may_be_open())
        return device_capture_info(stream, status, id);
    CUcontext owner = nullptr;
    if (CUresult r = cuStreamGetCtx(stream, &owner))
        return r;
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    *id = 0;
    return CUDA_SUCCESS;
}

// cuThreadExchangeStreamCaptureMode's value for this thread.
GUEST_PER_THREAD CUstreamCaptureMode t_capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

} // namespace

KVMGPU_DRIVER_ENTRY(cuThreadExchangeStreamCaptureMode, 10010);
extern "C" CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode)
{
    GUEST_API_LOCK();
    if (mode == nullptr || *mode < CU_STREAM_CAPTURE_MODE_GLOBAL || *mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    const CUstreamCaptureMode previous = t_capture_mode;
    t_capture_mode = *mode;
    *mode = previous;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY_AS(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2);
extern "C" CUresult cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_STREAM_BEGIN_CAPTURE>({stream_arg(hStream), static_cast<uint64_t>(mode)});
    if (CUresult r = call_sync(c))
        return r;
    CUstreamCaptureStatus status;
    uint64_t id = 0;
    if (CUresult r = device_capture_info(hStream, &status, &id))
        return r;
    capture_began(hStream, id);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuStreamEndCapture, 10000);
extern "C" CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph)
{
    GUEST_API_LOCK();
    const uint64_t id = capture_of(hStream);
    // A capture into the program's own graph may end without asking for it back.
    if (phGraph == nullptr && (id == 0 || !capture_into_program_graph(id)))
        return CUDA_ERROR_INVALID_VALUE;
    const bool blocked = id != 0 && host_steps_blocked(capture_owner(id));
    Call c = command<VGPU_OP_STREAM_END_CAPTURE>({stream_arg(hStream)});
    uint64_t res[2];
    const CUresult r = call_sync(c, res);
    if (r == CUDA_ERROR_STREAM_CAPTURE_UNMATCHED)
        return r; // not where it began: the capture goes on
    if (r == CUDA_SUCCESS && blocked) {
        host_step_order_refused("cuStreamEndCapture");
        if (!capture_into_program_graph(id)) { // the program's own graph stays the program's
            Call d = command<VGPU_OP_GRAPH_DESTROY>({res[0]});
            call_sync(d);
        }
        capture_ended(id);
        if (phGraph != nullptr)
            *phGraph = nullptr;
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (r == CUDA_SUCCESS && id != 0)
        host_steps_give(capture_owner(id), res[0], false);
    if (id != 0)
        capture_ended(id);
    if (r != CUDA_SUCCESS)
        return r;
    if (phGraph != nullptr)
        *phGraph = handle_of<CUgraph>(res[0]);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuStreamIsCapturing, 10000);
extern "C" CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus)
{
    GUEST_API_LOCK();
    if (captureStatus == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t id;
    return capture_info(hStream, captureStatus, &id);
}

KVMGPU_DRIVER_ENTRY_AS(cuStreamGetCaptureInfo, 12030, cuStreamGetCaptureInfo_v3);
extern "C" CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                           cuuint64_t* id_out, CUgraph* graph_out,
                                           const CUgraphNode** dependencies_out,
                                           const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out)
{
    GUEST_API_LOCK();
    if (captureStatus_out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t id = 0;
    if (CUresult r = capture_info(hStream, captureStatus_out, &id))
        return r;
    if (id_out != nullptr)
        *id_out = id;
    const bool more = graph_out != nullptr || dependencies_out != nullptr || edgeData_out != nullptr ||
                      numDependencies_out != nullptr;
    if (more && *captureStatus_out == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        if (edgeData_out != nullptr)
            *edgeData_out = nullptr; // every edge a default one
        return capture_graph_of(hStream, graph_out, dependencies_out, numDependencies_out);
    }
    if (graph_out != nullptr)
        *graph_out = nullptr;
    if (dependencies_out != nullptr)
        *dependencies_out = nullptr;
    if (edgeData_out != nullptr)
        *edgeData_out = nullptr;
    if (numDependencies_out != nullptr)
        *numDependencies_out = 0;
    return CUDA_SUCCESS;
}
