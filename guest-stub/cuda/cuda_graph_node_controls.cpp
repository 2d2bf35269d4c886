// Event nodes (record, wait), nodes switched off in an executable graph and
// an executable graph's flags: the vGPU's GRAPH_ADD_EVENT_NODE,
// GRAPH_EVENT_NODE_SET/GET_EVENT, GRAPH_NODE_SET/GET_ENABLED and
// GRAPH_EXEC_GET_FLAGS. The VMM checks every handle (event and graph of the
// current context, node of the exec's graph, the node's kind).
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_nodes.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

CUresult add_event_node(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t n, CUevent event, bool wait)
{
    Call c = command<VGPU_OP_GRAPH_ADD_EVENT_NODE>(vgpu_args_event_node{handle_bits(graph), handle_bits(event), wait ? 1u : 0u});
    return add_graph_node(c, out, graph, deps, n);
}

CUresult set_event(CUgraphExec exec, CUgraphNode node, CUevent event, bool wait)
{
    Call c = command<VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT>(vgpu_args_node_event{handle_bits(exec), handle_bits(node), handle_bits(event), wait ? 1u : 0u});
    return call_sync(c);
}

CUresult get_event(CUgraphNode node, CUevent* out, bool wait)
{
    if (out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t event = 0;
    if (CUresult r = call<VGPU_OP_GRAPH_EVENT_NODE_GET_EVENT>({handle_bits(node), uint64_t{wait}}, &event))
        return r;
    *out = handle_of<CUevent>(event);
    return CUDA_SUCCESS;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuGraphAddEventRecordNode, 11010);
extern "C" CUresult cuGraphAddEventRecordNode(CUgraphNode* phGraphNode, CUgraph hGraph,
                                              const CUgraphNode* dependencies, size_t numDependencies, CUevent event)
{
    GUEST_API_LOCK();
    return add_event_node(phGraphNode, hGraph, dependencies, numDependencies, event, false);
}

KVMGPU_DRIVER_ENTRY(cuGraphAddEventWaitNode, 11010);
extern "C" CUresult cuGraphAddEventWaitNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                            size_t numDependencies, CUevent event)
{
    GUEST_API_LOCK();
    return add_event_node(phGraphNode, hGraph, dependencies, numDependencies, event, true);
}

KVMGPU_DRIVER_ENTRY(cuGraphEventRecordNodeGetEvent, 11010);
extern "C" CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent* event_out)
{
    GUEST_API_LOCK();
    return get_event(hNode, event_out, false);
}

KVMGPU_DRIVER_ENTRY(cuGraphEventRecordNodeSetEvent, 11010);
extern "C" CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event)
{
    GUEST_API_LOCK();
    return set_event(nullptr, hNode, event, false);
}

KVMGPU_DRIVER_ENTRY(cuGraphEventWaitNodeGetEvent, 11010);
extern "C" CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent* event_out)
{
    GUEST_API_LOCK();
    return get_event(hNode, event_out, true);
}

KVMGPU_DRIVER_ENTRY(cuGraphEventWaitNodeSetEvent, 11010);
extern "C" CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event)
{
    GUEST_API_LOCK();
    return set_event(nullptr, hNode, event, true);
}

// A null exec would name the graph's own node to the vGPU: refused here.
KVMGPU_DRIVER_ENTRY(cuGraphExecEventRecordNodeSetEvent, 11010);
extern "C" CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event)
{
    GUEST_API_LOCK();
    return hGraphExec == nullptr ? CUDA_ERROR_INVALID_VALUE : set_event(hGraphExec, hNode, event, false);
}

KVMGPU_DRIVER_ENTRY(cuGraphExecEventWaitNodeSetEvent, 11010);
extern "C" CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event)
{
    GUEST_API_LOCK();
    return hGraphExec == nullptr ? CUDA_ERROR_INVALID_VALUE : set_event(hGraphExec, hNode, event, true);
}

KVMGPU_DRIVER_ENTRY(cuGraphNodeSetEnabled, 11060);
extern "C" CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_GRAPH_NODE_SET_ENABLED>(vgpu_args_node_enabled{handle_bits(hGraphExec), handle_bits(hNode), isEnabled != 0 ? 1u : 0u});
    return call_sync(c);
}

KVMGPU_DRIVER_ENTRY(cuGraphNodeGetEnabled, 11060);
extern "C" CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int* isEnabled)
{
    GUEST_API_LOCK();
    if (isEnabled == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t on = 0;
    if (CUresult r = call<VGPU_OP_GRAPH_NODE_GET_ENABLED>({handle_bits(hGraphExec), handle_bits(hNode)}, &on))
        return r;
    *isEnabled = static_cast<unsigned int>(on);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuGraphExecGetFlags, 12000);
extern "C" CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t* flags)
{
    GUEST_API_LOCK();
    if (flags == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t f = 0;
    if (CUresult r = call<VGPU_OP_GRAPH_EXEC_GET_FLAGS>({handle_bits(hGraphExec)}, &f))
        return r;
    *flags = f;
    return CUDA_SUCCESS;
}
