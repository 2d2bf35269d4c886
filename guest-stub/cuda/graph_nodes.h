// Internal to the guest CUDA API: adding a node made by one vGPU call.
#pragma once

#include <stddef.h>

#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"

namespace guest::cuda {

// When a new node gets its dependencies: with it (GRAPH_NEXT_NODE_DEPENDENCIES
// before c: the driver makes the node as the program asked), or as
// edges after it (an opcode that does not take them: the node is destroyed
// again if they fail).
enum class DependenciesAt { Creation, Edges };

// Sends c (a GRAPH_ADD_* call: result[0] the node) with the node's
// dependencies. *out (and *second, result[1], where given) on success.
CUresult add_graph_node(Call& c, CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t n,
                        uint64_t* second = nullptr, DependenciesAt when = DependenciesAt::Creation);

// cuda_graph_memory.cpp: the memory nodes this library keeps go with their
// graph or node; cuMemAllocAsync / cuMemFreeAsync of a graph allocation.
void graph_memory_forget_graph(uint64_t graph);
void graph_memory_forget_node(uint64_t node);
CUresult graph_allocation_captured(CUdeviceptr* dptr, size_t bytes, CUstream stream);
CUresult graph_allocation_free(CUdeviceptr dptr, CUstream stream);

// cuda_graph_conditionals.cpp: a conditional node (cuGraphAddNode's
// CU_GRAPH_NODE_TYPE_CONDITIONAL), its body graphs written to p->phGraph_out;
// the graph an active capture on `stream` records into and its dependencies.
CUresult add_conditional_node(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t n,
                              CUDA_CONDITIONAL_NODE_PARAMS* p);
CUresult capture_graph_of(CUstream stream, CUgraph* graph, const CUgraphNode** deps, size_t* count);

// Every one of the n edges (data null: all) is a default edge; programmatic
// edges (ports, types) are not offered.
inline bool default_edges(const CUgraphEdgeData* data, size_t n)
{
    for (size_t i = 0; data != nullptr && i < n; ++i)
        if (data[i].from_port || data[i].to_port || data[i].type)
            return false;
    return true;
}

} // namespace guest::cuda
