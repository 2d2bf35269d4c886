// The calls' older forms, under the names the driver exports them by. Where
// cuda.h renames a call to a versioned symbol (cuGraphGetEdges to
// cuGraphGetEdges_v2), the plain symbol keeps the call's first signature:
// a library that resolves it with dlsym (cuBLASLt resolves its driver
// calls so) or a runtime that asks cuGetProcAddress for an older version
// (a CUDA 12 cudart asks for cuStreamGetCaptureInfo at 11.3) calls with
// that signature. Each form here translates to the newest and is marked at
// its version (driver_entry.h), so libcuda.so.1's cuGetProcAddress offers
// it. The 32-bit forms of CUDA 2.x (cuMemAlloc's first) are not offered.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/versioned_forms.h"
#include "guest-stub/platform/api_lock.h"

namespace {

// 12.0's form of p (no CUkernel, the current context); p may be null.
const CUDA_KERNEL_NODE_PARAMS* newest(const CUDA_KERNEL_NODE_PARAMS_v1* p, CUDA_KERNEL_NODE_PARAMS* out)
{
    if (p == nullptr)
        return nullptr;
    *out = CUDA_KERNEL_NODE_PARAMS{};
    out->func = p->func;
    out->gridDimX = p->gridDimX, out->gridDimY = p->gridDimY, out->gridDimZ = p->gridDimZ;
    out->blockDimX = p->blockDimX, out->blockDimY = p->blockDimY, out->blockDimZ = p->blockDimZ;
    out->sharedMemBytes = p->sharedMemBytes;
    out->kernelParams = p->kernelParams;
    out->extra = p->extra;
    return out;
}

} // namespace

extern "C" {

// ---- contexts and entry points --------------------------------------------

// CUDA 2.0's and 3.2's form (the same on 64-bit hosts): no creation parameters.
CUresult cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate_v4(pctx, nullptr, flags, dev);
}
CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate_v4(pctx, nullptr, flags, dev);
}
KVMGPU_DRIVER_ENTRY_AS(cuCtxCreate, 3020, cuCtxCreate_v2);

// CUDA 11.4's form: execution affinity, which a VM's context cannot have
// (the GPU is shared); none asked for is a plain creation.
CUresult cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags,
                        CUdevice dev)
{
    if (numParams < 0 || (numParams > 0 && paramsArray == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    if (numParams > 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    return cuCtxCreate_v4(pctx, nullptr, flags, dev);
}
KVMGPU_DRIVER_ENTRY_AS(cuCtxCreate, 11040, cuCtxCreate_v3);

// CUDA 11.3's form: no status out.
CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, nullptr);
}
KVMGPU_DRIVER_ENTRY(cuGetProcAddress, 11030);

// ---- stream capture ---------------------------------------------------------

// CUDA 10.0's form: capture in the global mode, 10.1's default.
CUresult cuStreamBeginCapture(CUstream hStream)
{
    return cuStreamBeginCapture_v2(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}
KVMGPU_DRIVER_ENTRY(cuStreamBeginCapture, 10000);

// CUDA 10.1's form: status and id.
CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out)
{
    return cuStreamGetCaptureInfo_v3(hStream, captureStatus_out, id_out, nullptr, nullptr, nullptr, nullptr);
}
KVMGPU_DRIVER_ENTRY(cuStreamGetCaptureInfo, 10010);

// CUDA 11.3's form: no edge data.
CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* captureStatus_out, cuuint64_t* id_out,
                                   CUgraph* graph_out, const CUgraphNode** dependencies_out,
                                   size_t* numDependencies_out)
{
    return cuStreamGetCaptureInfo_v3(hStream, captureStatus_out, id_out, graph_out, dependencies_out, nullptr,
                                     numDependencies_out);
}
KVMGPU_DRIVER_ENTRY_AS(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2);

// CUDA 11.3's form: no edge data.
CUresult cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode* dependencies, size_t numDependencies,
                                           unsigned int flags)
{
    return cuStreamUpdateCaptureDependencies_v2(hStream, dependencies, nullptr, numDependencies, flags);
}
KVMGPU_DRIVER_ENTRY(cuStreamUpdateCaptureDependencies, 11030);

// ---- graphs -----------------------------------------------------------------

// CUDA 10.0's form (and 11.0's _v2): an error node and a log buffer beside
// the executable graph. Instantiation either works or returns its error;
// neither names a node nor writes a log here.
CUresult cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode, char* logBuffer,
                            size_t bufferSize)
{
    GUEST_API_LOCK();
    if (phErrorNode != nullptr)
        *phErrorNode = nullptr;
    if (logBuffer != nullptr && bufferSize > 0)
        logBuffer[0] = '\0';
    return cuGraphInstantiateWithFlags(phGraphExec, hGraph, 0);
}
KVMGPU_DRIVER_ENTRY(cuGraphInstantiate, 10000);
CUresult cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode, char* logBuffer,
                               size_t bufferSize)
{
    return cuGraphInstantiate(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}
KVMGPU_DRIVER_ENTRY_AS(cuGraphInstantiate, 11000, cuGraphInstantiate_v2);

// CUDA 10.2's form: the result and the node it names, apart.
CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode* hErrorNode_out,
                           CUgraphExecUpdateResult* updateResult_out)
{
    if (hErrorNode_out == nullptr || updateResult_out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraphExecUpdateResultInfo info = {};
    const CUresult r = cuGraphExecUpdate_v2(hGraphExec, hGraph, &info);
    *hErrorNode_out = info.errorNode;
    *updateResult_out = info.result;
    return r;
}
KVMGPU_DRIVER_ENTRY(cuGraphExecUpdate, 10020);

// CUDA 10.0's kernel node calls, on the smaller parameter struct.
CUresult cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                              size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
{
    CUDA_KERNEL_NODE_PARAMS p;
    return cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies, numDependencies, newest(nodeParams, &p));
}
KVMGPU_DRIVER_ENTRY(cuGraphAddKernelNode, 10000);

CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
{
    CUDA_KERNEL_NODE_PARAMS p;
    return cuGraphKernelNodeSetParams_v2(hNode, newest(nodeParams, &p));
}
KVMGPU_DRIVER_ENTRY(cuGraphKernelNodeSetParams, 10000);

CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
{
    CUDA_KERNEL_NODE_PARAMS p;
    return cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode, newest(nodeParams, &p));
}
KVMGPU_DRIVER_ENTRY(cuGraphExecKernelNodeSetParams, 10010);

// Written field by field into the caller's smaller struct.
CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1* nodeParams)
{
    if (nodeParams == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS p = {};
    if (CUresult r = cuGraphKernelNodeGetParams_v2(hNode, &p))
        return r;
    *nodeParams = CUDA_KERNEL_NODE_PARAMS_v1{p.func,      p.gridDimX,  p.gridDimY,      p.gridDimZ,      p.blockDimX,
                                     p.blockDimY, p.blockDimZ, p.sharedMemBytes, p.kernelParams, p.extra};
    return CUDA_SUCCESS;
}
KVMGPU_DRIVER_ENTRY(cuGraphKernelNodeGetParams, 10000);

// CUDA 12.2's form: no edge data.
CUresult cuGraphAddNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                        size_t numDependencies, CUgraphNodeParams* nodeParams)
{
    return cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, nullptr, numDependencies, nodeParams);
}
KVMGPU_DRIVER_ENTRY(cuGraphAddNode, 12020);

// CUDA 10.0's edge calls: edges without data (every edge here is a default one).
CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                size_t numDependencies)
{
    return cuGraphAddDependencies_v2(hGraph, from, to, nullptr, numDependencies);
}
KVMGPU_DRIVER_ENTRY(cuGraphAddDependencies, 10000);

CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                   size_t numDependencies)
{
    return cuGraphRemoveDependencies_v2(hGraph, from, to, nullptr, numDependencies);
}
KVMGPU_DRIVER_ENTRY(cuGraphRemoveDependencies, 10000);

CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to, size_t* numEdges)
{
    return cuGraphGetEdges_v2(hGraph, from, to, nullptr, numEdges);
}
KVMGPU_DRIVER_ENTRY(cuGraphGetEdges, 10000);

CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* dependencies, size_t* numDependencies)
{
    return cuGraphNodeGetDependencies_v2(hNode, dependencies, nullptr, numDependencies);
}
KVMGPU_DRIVER_ENTRY(cuGraphNodeGetDependencies, 10000);

CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode* dependentNodes, size_t* numDependentNodes)
{
    return cuGraphNodeGetDependentNodes_v2(hNode, dependentNodes, nullptr, numDependentNodes);
}
KVMGPU_DRIVER_ENTRY(cuGraphNodeGetDependentNodes, 10000);

} // extern "C"
