// Conditional and child graph nodes, and the graph under a capture, on
// the real driver (CUDA 12.3 and later): what NVIDIA's graphConditionalNodes
// sample and runtimes that build graphs around a capture ask for.

#include <algorithm>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/cuda_graphs.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"

namespace kvmgpu::vgpu {

Status CudaGraphs::conditional_create(BackendGraph g, uint32_t default_value, uint32_t flags, uint64_t* out) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuGraphConditionalHandleCreate, 12030);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    CUgraphConditionalHandle h = 0;
    CU_TRY(fn(&h, reinterpret_cast<CUgraph>(g), ctx_, default_value, flags));
    *out = h;
    return VGPU_SUCCESS;
}

Status CudaGraphs::add_conditional_node(BackendGraph g, uint64_t conditional, uint32_t type, uint32_t size,
                                        BackendGraphNode* out, std::vector<BackendGraph>* bodies) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuGraphAddNode, 12030);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    CUgraphNodeParams p{};
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = conditional;
    p.conditional.type = static_cast<CUgraphConditionalNodeType>(type);
    p.conditional.size = size;
    p.conditional.ctx = ctx_;
    CUgraphNode n = nullptr;
    CU_TRY(fn(&n, reinterpret_cast<CUgraph>(g), nullptr, nullptr, 0, &p));
    *out = reinterpret_cast<BackendGraphNode>(n);
    bodies->clear(); // phGraph_out: the driver's own array, which it points the parameters at
    for (uint32_t i = 0; p.conditional.phGraph_out != nullptr && i < size; ++i)
        bodies->push_back(reinterpret_cast<BackendGraph>(p.conditional.phGraph_out[i]));
    if (bodies->size() != size || std::find(bodies->begin(), bodies->end(), BackendGraph{0}) != bodies->end())
        return VGPU_ERROR_UNKNOWN;
    return VGPU_SUCCESS;
}

Status CudaGraphs::capture_graph(BackendStream s, BackendGraph* g, std::vector<BackendGraphNode>* deps) {
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph captured = nullptr;
    const CUgraphNode* nodes = nullptr;
    size_t count = 0;
    CU_TRY(api_.cuStreamGetCaptureInfo(reinterpret_cast<CUstream>(s), &st, nullptr, &captured, &nodes, nullptr, &count));
    if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE) return VGPU_ERROR_STREAM_CAPTURE_INVALIDATED;
    *g = reinterpret_cast<BackendGraph>(captured);
    deps->assign(reinterpret_cast<const BackendGraphNode*>(nodes), reinterpret_cast<const BackendGraphNode*>(nodes) + count);
    return VGPU_SUCCESS;
}

Status CudaGraphs::update_capture_dependencies(BackendStream s, std::span<const BackendGraphNode> deps, uint32_t flags) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuStreamUpdateCaptureDependencies, 12030);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    std::vector<CUgraphNode> nodes = driver_nodes(deps);
    return to_status(fn(reinterpret_cast<CUstream>(s), nodes.data(), nullptr, nodes.size(), flags));
}

Status CudaGraphs::begin_capture_to_graph(BackendStream s, BackendGraph g, std::span<const BackendGraphNode> deps,
                                          uint32_t mode) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuStreamBeginCaptureToGraph, 12030);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    std::vector<CUgraphNode> nodes = driver_nodes(deps);
    return to_status(fn(reinterpret_cast<CUstream>(s), reinterpret_cast<CUgraph>(g), nodes.data(), nullptr,
                        nodes.size(), static_cast<CUstreamCaptureMode>(mode)));
}

Status CudaGraphs::add_child_graph_node(BackendGraph g, BackendGraph child, BackendGraphNode* out) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuGraphAddChildGraphNode, 10000);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    CUgraphNode n = nullptr;
    CU_TRY(fn(&n, reinterpret_cast<CUgraph>(g), nullptr, 0, reinterpret_cast<CUgraph>(child)));
    *out = reinterpret_cast<BackendGraphNode>(n);
    return VGPU_SUCCESS;
}

Status CudaGraphs::child_graph(BackendGraphNode node, BackendGraph* out) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuGraphChildGraphNodeGetGraph, 10000);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    CUgraph g = nullptr;
    CU_TRY(fn(reinterpret_cast<CUgraphNode>(node), &g));
    *out = reinterpret_cast<BackendGraph>(g);
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
