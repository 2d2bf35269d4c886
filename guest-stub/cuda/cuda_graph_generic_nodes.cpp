// CUDA 12.2's one call for nodes of any kind (cuGraphAddNode,
// cuGraphNodeSetParams, cuGraphExecNodeSetParams): each kind's parameters
// go to the call for that kind, so the checks and the vGPU commands are
// theirs. The kinds those calls do not offer are CUDA_ERROR_NOT_SUPPORTED.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_nodes.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/platform/api_lock.h"

namespace {

bool reserved_clear(const CUgraphNodeParams& p)
{
    return p.reserved0[0] == 0 && p.reserved0[1] == 0 && p.reserved0[2] == 0 && p.reserved2 == 0;
}

// The parameters a kernel node takes: a CUfunction (a CUkernel node is not offered).
CUresult kernel_ok(const CUDA_KERNEL_NODE_PARAMS& k)
{
    return k.func == nullptr ? (k.kern != nullptr ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE)
                             : CUDA_SUCCESS;
}

// For the Set calls: p must name the node's own kind.
CUresult same_kind(CUgraphNode node, const CUgraphNodeParams* p)
{
    if (p == nullptr || !reserved_clear(*p))
        return CUDA_ERROR_INVALID_VALUE;
    CUgraphNodeType type;
    if (CUresult r = cuGraphNodeGetType(node, &type))
        return r;
    return type == p->type ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUDA_MEMSET_NODE_PARAMS memset_of(const CUDA_MEMSET_NODE_PARAMS_v2& m)
{
    return CUDA_MEMSET_NODE_PARAMS{m.dst, m.pitch, m.value, m.elementSize, m.width, m.height};
}

} // namespace

KVMGPU_DRIVER_ENTRY_AS(cuGraphAddNode, 12030, cuGraphAddNode_v2);
extern "C" CUresult cuGraphAddNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                   const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                   CUgraphNodeParams* nodeParams)
{
    GUEST_API_LOCK();
    if (phGraphNode == nullptr || nodeParams == nullptr || !reserved_clear(*nodeParams))
        return CUDA_ERROR_INVALID_VALUE;
    if (!guest::cuda::default_edges(dependencyData, numDependencies))
        return CUDA_ERROR_NOT_SUPPORTED;
    const CUgraphNodeParams& p = *nodeParams;
    switch (p.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        if (CUresult r = kernel_ok(p.kernel))
            return r;
        return cuGraphAddKernelNode(phGraphNode, hGraph, dependencies, numDependencies, &p.kernel);
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (p.memcpy.flags != 0 || p.memcpy.reserved != 0)
            return CUDA_ERROR_INVALID_VALUE;
        return cuGraphAddMemcpyNode(phGraphNode, hGraph, dependencies, numDependencies, &p.memcpy.copyParams,
                                    p.memcpy.copyCtx);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        const CUDA_MEMSET_NODE_PARAMS m = memset_of(p.memset);
        return cuGraphAddMemsetNode(phGraphNode, hGraph, dependencies, numDependencies, &m, p.memset.ctx);
    }
    case CU_GRAPH_NODE_TYPE_HOST:
        return cuGraphAddHostNode(phGraphNode, hGraph, dependencies, numDependencies, &p.host);
    case CU_GRAPH_NODE_TYPE_EMPTY:
        return cuGraphAddEmptyNode(phGraphNode, hGraph, dependencies, numDependencies);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        return cuGraphAddEventRecordNode(phGraphNode, hGraph, dependencies, numDependencies, p.eventRecord.event);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        return cuGraphAddEventWaitNode(phGraphNode, hGraph, dependencies, numDependencies, p.eventWait.event);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
        const CUDA_MEM_ALLOC_NODE_PARAMS_v2& a = p.alloc;
        CUDA_MEM_ALLOC_NODE_PARAMS v1{a.poolProps, a.accessDescs, a.accessDescCount, a.bytesize, 0};
        const CUresult r = cuGraphAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies, &v1);
        if (r == CUDA_SUCCESS)
            nodeParams->alloc.dptr = v1.dptr; // the one output the call has
        return r;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        return cuGraphAddMemFreeNode(phGraphNode, hGraph, dependencies, numDependencies, p.free.dptr);
    case CU_GRAPH_NODE_TYPE_GRAPH:
        return cuGraphAddChildGraphNode(phGraphNode, hGraph, dependencies, numDependencies, p.graph.graph);
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        return guest::cuda::add_conditional_node(phGraphNode, hGraph, dependencies, numDependencies,
                                                 &nodeParams->conditional);
    default: // external semaphore and batch memop nodes
        return static_cast<unsigned>(p.type) <= 13 ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
    }
}

KVMGPU_DRIVER_ENTRY(cuGraphNodeSetParams, 12020);
extern "C" CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams* nodeParams)
{
    GUEST_API_LOCK();
    if (CUresult r = same_kind(hNode, nodeParams))
        return r;
    const CUgraphNodeParams& p = *nodeParams;
    switch (p.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        if (CUresult r = kernel_ok(p.kernel))
            return r;
        return cuGraphKernelNodeSetParams(hNode, &p.kernel);
    case CU_GRAPH_NODE_TYPE_HOST:
        return cuGraphHostNodeSetParams(hNode, &p.host);
    case CU_GRAPH_NODE_TYPE_EMPTY:
        return CUDA_SUCCESS; // nothing to set
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        return cuGraphEventRecordNodeSetEvent(hNode, p.eventRecord.event);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        return cuGraphEventWaitNodeSetEvent(hNode, p.eventWait.event);
    default: // memcpy, memset and memory nodes keep what they were added with
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}

// The exec's copy of the node; the graph's keeps its own.
KVMGPU_DRIVER_ENTRY(cuGraphExecNodeSetParams, 12020);
extern "C" CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeParams* nodeParams)
{
    GUEST_API_LOCK();
    if (hGraphExec == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = same_kind(hNode, nodeParams))
        return r;
    const CUgraphNodeParams& p = *nodeParams;
    switch (p.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        if (CUresult r = kernel_ok(p.kernel))
            return r;
        return cuGraphExecKernelNodeSetParams(hGraphExec, hNode, &p.kernel);
    case CU_GRAPH_NODE_TYPE_HOST:
        return cuGraphExecHostNodeSetParams(hGraphExec, hNode, &p.host);
    case CU_GRAPH_NODE_TYPE_EMPTY:
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        return cuGraphExecEventRecordNodeSetEvent(hGraphExec, hNode, p.eventRecord.event);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        return cuGraphExecEventWaitNodeSetEvent(hGraphExec, hNode, p.eventWait.event);
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}
