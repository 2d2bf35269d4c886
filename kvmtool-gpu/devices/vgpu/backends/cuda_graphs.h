// CUDA graphs and stream capture on the real driver, for CudaBackend:
// every call is the Driver API's own (cuGraph*, cuStreamBeginCapture...), in
// the backend's context. Copy nodes name guest RAM, registered with the
// driver for the VM's life, so a node stays valid however late it runs.
#pragma once

#include <cuda.h>

#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/cuda_driver_api.h"
#include "kvmtool-gpu/devices/vgpu/backends/graph_backend.h"

namespace kvmgpu::vgpu {

// Nodes (a new node's dependencies, a capture's) as the driver takes them.
inline std::vector<CUgraphNode> driver_nodes(std::span<const BackendGraphNode> nodes) {
    std::vector<CUgraphNode> out;
    out.reserve(nodes.size());
    for (const BackendGraphNode n : nodes) out.push_back(reinterpret_cast<CUgraphNode>(n));
    return out;
}

class CudaGraphs final : public GraphBackend {
public:
    // `ctx` is the backend's context, read at each call (a recovery makes a new one).
    // `device` is the backend's device (graph allocations are made there).
    CudaGraphs(const CudaDriverApi& api, CUcontext const& ctx, CUdevice const& device)
        : api_(api), ctx_(ctx), device_(device) {}
    // Whether the driver gave every entry point graphs need.
    bool available() const;

    Status begin_capture(BackendStream s, uint32_t mode) override;
    Status end_capture(BackendStream s, BackendGraph* out) override;
    Status capture_status(BackendStream s, uint32_t* status, uint64_t* id) override;
    Status graph_create(BackendGraph* out) override;
    Status graph_destroy(BackendGraph g) override;
    Status add_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out) override;
    Status set_kernel_params(BackendGraphExec exec, BackendGraphNode node, const GraphNodeSpec& spec) override;
    Status dependency(BackendGraph g, BackendGraphNode from, BackendGraphNode to, bool remove) override;
    Status nodes(BackendGraph g, std::vector<BackendGraphNode>* out) override;
    Status destroy_node(BackendGraphNode node) override;
    Status edges(BackendGraph g, std::vector<std::pair<BackendGraphNode, BackendGraphNode>>* out) override;
    Status node_type(BackendGraphNode node, uint32_t* type) override;
    Status clone(BackendGraph g, BackendGraph* out,
                 std::vector<std::pair<BackendGraphNode, BackendGraphNode>>* map) override;
    // cuda_graph_node_controls.cpp:
    Status set_node_event(BackendGraphExec exec, BackendGraphNode node, bool wait, BackendEvent e) override;
    Status node_event(BackendGraphNode node, bool wait, BackendEvent* out) override;
    Status set_enabled(BackendGraphExec exec, BackendGraphNode node, bool enabled) override;
    Status enabled(BackendGraphExec exec, BackendGraphNode node, bool* out) override;
    Status add_event_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out);

    // cuda_graph_memory.cpp: the driver's memory nodes.
    Status add_alloc_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out, uint64_t* dptr) override;
    Status alloc_in_capture(BackendStream s, uint64_t bytes, uint64_t* dptr) override;
    Status free_graph_allocation(BackendStream s, uint64_t dptr) override;
    Status add_free_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out);

    Status conditional_create(BackendGraph g, uint32_t default_value, uint32_t flags, uint64_t* out) override;
    Status add_conditional_node(BackendGraph g, uint64_t conditional, uint32_t type, uint32_t size,
                                BackendGraphNode* out, std::vector<BackendGraph>* bodies) override;
    Status capture_graph(BackendStream s, BackendGraph* g, std::vector<BackendGraphNode>* deps) override;
    Status update_capture_dependencies(BackendStream s, std::span<const BackendGraphNode> deps, uint32_t flags) override;
    Status begin_capture_to_graph(BackendStream s, BackendGraph g, std::span<const BackendGraphNode> deps,
                                  uint32_t mode) override;
    Status add_child_graph_node(BackendGraph g, BackendGraph child, BackendGraphNode* out) override;
    Status child_graph(BackendGraphNode node, BackendGraph* out) override;
    Status instantiate(BackendGraph g, uint64_t flags, BackendGraphExec* out) override;
    Status exec_destroy(BackendGraphExec e) override;
    Status exec_update(BackendGraphExec e, BackendGraph g, uint32_t* result) override;
    Status launch(BackendGraphExec e, BackendStream s, bool upload_only) override;

private:
    const CudaDriverApi& api_;
    CUcontext const& ctx_;
    CUdevice const& device_;
};

} // namespace kvmgpu::vgpu
