// CUDA graphs and stream capture in the runtime: each call is the guest
// Driver API's (guest_cuda_graphs.h, where what is refused is said), with
// the runtime's kernels (host stubs) turned into their CUfunction.
#include <string.h>

#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {

static_assert(sizeof(cudaGraphEdgeData) == sizeof(CUgraphEdgeData), "the runtime's edge data is the driver's");
static_assert(sizeof(cudaGraphExecUpdateResultInfo) == sizeof(CUgraphExecUpdateResultInfo), "update result");

// The driver's kernel node parameters for the runtime's.
cudaError_t kernel_params(const cudaKernelNodeParams* p, CUDA_KERNEL_NODE_PARAMS* out)
{
    if (p == nullptr)
        return cudaErrorInvalidValue;
    CUfunction f;
    if (cudaError_t e = function_of(p->func, &f))
        return e;
    *out = CUDA_KERNEL_NODE_PARAMS{f, p->gridDim.x, p->gridDim.y, p->gridDim.z, p->blockDim.x, p->blockDim.y,
                                   p->blockDim.z, p->sharedMemBytes, p->kernelParams, p->extra, nullptr, nullptr};
    return cudaSuccess;
}

// One side of a runtime copy, as the driver's memory type says it.
CUmemorytype memory_type(cudaMemcpyKind kind, bool source)
{
    switch (kind) {
    case cudaMemcpyHostToDevice: return source ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    case cudaMemcpyDeviceToHost: return source ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    case cudaMemcpyDeviceToDevice: return CU_MEMORYTYPE_DEVICE;
    case cudaMemcpyHostToHost: return CU_MEMORYTYPE_HOST;
    default: return CU_MEMORYTYPE_UNIFIED;
    }
}

CUDA_MEMCPY3D copy_1d(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind)
{
    CUDA_MEMCPY3D c{};
    c.srcMemoryType = memory_type(kind, true);
    c.srcHost = src;
    c.srcDevice = reinterpret_cast<uintptr_t>(src);
    c.dstMemoryType = memory_type(kind, false);
    c.dstHost = dst;
    c.dstDevice = reinterpret_cast<uintptr_t>(dst);
    c.WidthInBytes = bytes, c.Height = 1, c.Depth = 1;
    return c;
}

} // namespace

extern "C" {

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuStreamBeginCapture(stream, static_cast<CUstreamCaptureMode>(mode)));
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuStreamEndCapture(stream, pGraph));
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* pCaptureStatus)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuStreamIsCapturing(stream, reinterpret_cast<CUstreamCaptureStatus*>(pCaptureStatus)));
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* captureStatus_out,
                                     unsigned long long* id_out, cudaGraph_t* graph_out,
                                     const cudaGraphNode_t** dependencies_out,
                                     const cudaGraphEdgeData** edgeData_out, size_t* numDependencies_out)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    cuuint64_t id = 0;
    const CUresult r = cuStreamGetCaptureInfo(stream, reinterpret_cast<CUstreamCaptureStatus*>(captureStatus_out),
                                              &id, graph_out, dependencies_out,
                                              reinterpret_cast<const CUgraphEdgeData**>(edgeData_out),
                                              numDependencies_out);
    if (r == CUDA_SUCCESS && id_out != nullptr)
        *id_out = id;
    return record(r);
}

cudaError_t cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuGraphCreate(pGraph, flags));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    GUEST_API_LOCK();
    return record(cuGraphDestroy(graph));
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                   size_t numDependencies, const cudaKernelNodeParams* pNodeParams)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    CUDA_KERNEL_NODE_PARAMS p;
    if (cudaError_t e = kernel_params(pNodeParams, &p))
        return record(e);
    return record(cuGraphAddKernelNode(pGraphNode, graph, pDependencies, numDependencies, &p));
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const cudaKernelNodeParams* pNodeParams)
{
    GUEST_API_LOCK();
    CUDA_KERNEL_NODE_PARAMS p;
    if (cudaError_t e = kernel_params(pNodeParams, &p))
        return record(e);
    return record(cuGraphKernelNodeSetParams(node, &p));
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                             const cudaKernelNodeParams* pNodeParams)
{
    GUEST_API_LOCK();
    CUDA_KERNEL_NODE_PARAMS p;
    if (cudaError_t e = kernel_params(pNodeParams, &p))
        return record(e);
    return record(cuGraphExecKernelNodeSetParams(hGraphExec, node, &p));
}

// 1D copies only (extent height and depth 1, no arrays): see guest_cuda_graphs.h.
cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                   size_t numDependencies, const cudaMemcpy3DParms* p)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (p == nullptr)
        return record(cudaErrorInvalidValue);
    if (p->srcArray != nullptr || p->dstArray != nullptr || p->extent.height > 1 || p->extent.depth > 1 ||
        p->srcPos.y || p->srcPos.z || p->dstPos.y || p->dstPos.z)
        return record(cudaErrorNotSupported);
    CUDA_MEMCPY3D c = copy_1d(p->dstPtr.ptr, p->srcPtr.ptr, p->extent.width, p->kind);
    c.srcXInBytes = p->srcPos.x, c.dstXInBytes = p->dstPos.x;
    return record(cuGraphAddMemcpyNode(pGraphNode, graph, pDependencies, numDependencies, &c, nullptr));
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                     const cudaGraphNode_t* pDependencies, size_t numDependencies, void* dst,
                                     const void* src, size_t count, cudaMemcpyKind kind)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    const CUDA_MEMCPY3D c = copy_1d(dst, src, count, kind);
    return record(cuGraphAddMemcpyNode(pGraphNode, graph, pDependencies, numDependencies, &c, nullptr));
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                   size_t numDependencies, const cudaMemsetParams* p)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (p == nullptr)
        return record(cudaErrorInvalidValue);
    const CUDA_MEMSET_NODE_PARAMS m{reinterpret_cast<uintptr_t>(p->dst), p->pitch, p->value, p->elementSize, p->width,
                                    p->height};
    return record(cuGraphAddMemsetNode(pGraphNode, graph, pDependencies, numDependencies, &m, nullptr));
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                 size_t numDependencies, const cudaHostNodeParams* p)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    if (p == nullptr)
        return record(cudaErrorInvalidValue);
    const CUDA_HOST_NODE_PARAMS h{p->fn, p->userData};
    return record(cuGraphAddHostNode(pGraphNode, graph, pDependencies, numDependencies, &h));
}

cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, cudaHostNodeParams* p)
{
    GUEST_API_LOCK();
    CUDA_HOST_NODE_PARAMS h;
    if (p == nullptr)
        return record(cudaErrorInvalidValue);
    if (CUresult r = cuGraphHostNodeGetParams(node, &h))
        return record(r);
    *p = cudaHostNodeParams{h.fn, h.userData};
    return cudaSuccess;
}

cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const cudaHostNodeParams* p)
{
    GUEST_API_LOCK();
    if (p == nullptr)
        return record(cudaErrorInvalidValue);
    const CUDA_HOST_NODE_PARAMS h{p->fn, p->userData};
    return record(cuGraphHostNodeSetParams(node, &h));
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                  size_t numDependencies)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies));
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* edgeData, size_t numDependencies)
{
    GUEST_API_LOCK();
    return record(cuGraphAddDependencies(graph, from, to, reinterpret_cast<const CUgraphEdgeData*>(edgeData),
                                         numDependencies));
}

cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                        const cudaGraphEdgeData* edgeData, size_t numDependencies)
{
    GUEST_API_LOCK();
    return record(cuGraphRemoveDependencies(graph, from, to, reinterpret_cast<const CUgraphEdgeData*>(edgeData),
                                            numDependencies));
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* numNodes)
{
    GUEST_API_LOCK();
    return record(cuGraphGetNodes(graph, nodes, numNodes));
}

cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node)
{
    GUEST_API_LOCK();
    return record(cuGraphDestroyNode(node));
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuGraphInstantiate(pGraphExec, graph, flags));
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    GUEST_API_LOCK();
    return cudaGraphInstantiate(pGraphExec, graph, flags);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuGraphLaunch(graphExec, stream));
}

cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    GUEST_API_LOCK();
    if (cudaError_t e = enter())
        return e;
    return record(cuGraphUpload(graphExec, stream));
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph, cudaGraphExecUpdateResultInfo* info)
{
    GUEST_API_LOCK();
    return record(cuGraphExecUpdate(hGraphExec, hGraph, reinterpret_cast<CUgraphExecUpdateResultInfo*>(info)));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    GUEST_API_LOCK();
    return record(cuGraphExecDestroy(graphExec));
}

} // extern "C"
