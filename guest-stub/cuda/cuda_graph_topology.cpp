// A graph's shape read back (its root nodes, edges, a node's dependencies,
// dependents and type) and copies of graphs (cuGraphClone,
// cuGraphNodeFindInClone): the vGPU's GRAPH_EDGES, GRAPH_NODE_GET_TYPE,
// GRAPH_CLONE and GRAPH_NODE_FIND_IN_CLONE. A host node is this library's
// (graph_host_steps.h): an empty node on the device, a host node here, and
// a clone gets its own copy of each.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/graph_kernel_params.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

// GRAPH_EDGES' pairs about `handle` (kind VGPU_GRAPH_EDGES_*), written as
// the driver writes such lists: `counting` asks for the count alone;
// otherwise up to *num pairs, the room past the last set to null (zeroed
// edge data), and *num = how many were written. Either array may be null.
CUresult edge_query(uint64_t handle, uint64_t kind, bool counting, CUgraphNode* from, CUgraphNode* to,
                    CUgraphEdgeData* data, size_t* num)
{
    if (num == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const size_t room = counting ? 0 : *num;
    size_t total = 0, got = 0;
    do {
        Call c = command<VGPU_OP_GRAPH_EDGES>(vgpu_args_graph_edges{handle, got, kind});
        uint64_t res[2], pairs[VGPU_GRAPH_EDGES_PER_CALL * 2];
        if (CUresult r = call_sync(c, res, pairs, sizeof pairs))
            return r;
        total = res[0];
        for (size_t i = 0; i < VGPU_GRAPH_EDGES_PER_CALL && got < total && got < room; ++i, ++got) {
            if (from != nullptr)
                from[got] = handle_of<CUgraphNode>(pairs[2 * i]);
            if (to != nullptr)
                to[got] = handle_of<CUgraphNode>(pairs[2 * i + 1]);
            if (data != nullptr)
                data[got] = CUgraphEdgeData{}; // only default edges are offered
        }
    } while (got < total && got < room);
    for (size_t i = got; i < room; ++i) {
        if (from != nullptr)
            from[i] = nullptr;
        if (to != nullptr)
            to[i] = nullptr;
        if (data != nullptr)
            data[i] = CUgraphEdgeData{};
    }
    *num = counting ? total : got;
    return CUDA_SUCCESS;
}

uint64_t copy_in_clone(uint64_t clone, uint64_t node)
{
    uint64_t res[2] = {};
    return call<VGPU_OP_GRAPH_NODE_FIND_IN_CLONE>({clone, node}, res) == CUDA_SUCCESS ? res[0] : 0;
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuGraphClone, 10000);
extern "C" CUresult cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph)
{
    GUEST_API_LOCK();
    if (phGraphClone == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t clone = 0;
    if (CUresult r = call<VGPU_OP_GRAPH_CLONE>({handle_bits(originalGraph)}, &clone))
        return r;
    if (!host_steps_clone(handle_bits(originalGraph), clone, copy_in_clone)) {
        host_steps_drop(clone);
        call<VGPU_OP_GRAPH_DESTROY>({clone});
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    kernel_params_clone(handle_bits(originalGraph), clone, copy_in_clone); // best effort, as the adds' are
    *phGraphClone = handle_of<CUgraph>(clone);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuGraphNodeFindInClone, 10000);
extern "C" CUresult cuGraphNodeFindInClone(CUgraphNode* phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph)
{
    GUEST_API_LOCK();
    if (phNode == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t node = 0;
    if (CUresult r = call<VGPU_OP_GRAPH_NODE_FIND_IN_CLONE>({handle_bits(hClonedGraph), handle_bits(hOriginalNode)}, &node))
        return r;
    *phNode = handle_of<CUgraphNode>(node);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuGraphGetRootNodes, 10000);
extern "C" CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode* rootNodes, size_t* numRootNodes)
{
    GUEST_API_LOCK();
    return edge_query(handle_bits(hGraph), VGPU_GRAPH_EDGES_ROOTS, rootNodes == nullptr, nullptr, rootNodes, nullptr,
                      numRootNodes);
}

// from and to both null: the count. Edge data, when asked for, is zeroed.
KVMGPU_DRIVER_ENTRY_AS(cuGraphGetEdges, 12030, cuGraphGetEdges_v2);
extern "C" CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* edgeData,
                                    size_t* numEdges)
{
    GUEST_API_LOCK();
    if ((from == nullptr) != (to == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    return edge_query(handle_bits(hGraph), VGPU_GRAPH_EDGES_ALL, from == nullptr, from, to, edgeData, numEdges);
}

KVMGPU_DRIVER_ENTRY_AS(cuGraphNodeGetDependencies, 12030, cuGraphNodeGetDependencies_v2);
extern "C" CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* dependencies,
                                               CUgraphEdgeData* edgeData, size_t* numDependencies)
{
    GUEST_API_LOCK();
    return edge_query(handle_bits(hNode), VGPU_GRAPH_EDGES_INTO, dependencies == nullptr, dependencies, nullptr,
                      edgeData, numDependencies);
}

KVMGPU_DRIVER_ENTRY_AS(cuGraphNodeGetDependentNodes, 12030, cuGraphNodeGetDependentNodes_v2);
extern "C" CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode* dependentNodes,
                                                 CUgraphEdgeData* edgeData, size_t* numDependentNodes)
{
    GUEST_API_LOCK();
    return edge_query(handle_bits(hNode), VGPU_GRAPH_EDGES_FROM, dependentNodes == nullptr, nullptr, dependentNodes,
                      edgeData, numDependentNodes);
}

// A host node is an empty node on the device: this library knows it is one.
KVMGPU_DRIVER_ENTRY(cuGraphNodeGetType, 10000);
extern "C" CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type)
{
    GUEST_API_LOCK();
    if (type == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t t = 0;
    if (CUresult r = call<VGPU_OP_GRAPH_NODE_GET_TYPE>({handle_bits(hNode)}, &t))
        return r;
    *type = host_step_of_node(handle_bits(hNode)) != nullptr ? CU_GRAPH_NODE_TYPE_HOST : static_cast<CUgraphNodeType>(t);
    return CUDA_SUCCESS;
}
