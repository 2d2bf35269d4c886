// CudaGraphs' event nodes and the switching off of an exec's nodes: entry
// points resolved late (CUDA 11.1 and 11.6), so a driver without them
// answers NOT_SUPPORTED for these alone.
#include "kvmtool-gpu/devices/vgpu/backends/cuda_graphs.h"

#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"

namespace kvmgpu::vgpu {

namespace {
CUgraph graph(BackendGraph g) { return reinterpret_cast<CUgraph>(g); }
CUgraphNode node(BackendGraphNode n) { return reinterpret_cast<CUgraphNode>(n); }
CUgraphExec exec(BackendGraphExec e) { return reinterpret_cast<CUgraphExec>(e); }
CUevent event(BackendEvent e) { return reinterpret_cast<CUevent>(e); }
} // namespace

Status CudaGraphs::add_event_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out) {
    const bool wait = spec.kind == GraphNodeSpec::Kind::EventWait;
    const auto add = wait ? KVMGPU_CUDA_LATE(api_, cuGraphAddEventWaitNode, 11010)
                          : KVMGPU_CUDA_LATE(api_, cuGraphAddEventRecordNode, 11010);
    if (!add) return VGPU_ERROR_NOT_SUPPORTED;
    CUgraphNode n = nullptr;
    const std::vector<CUgraphNode> deps = driver_nodes(spec.dependencies);
    CU_TRY(add(&n, graph(g), deps.data(), deps.size(), event(spec.event)));
    *out = reinterpret_cast<BackendGraphNode>(n);
    return VGPU_SUCCESS;
}

Status CudaGraphs::set_node_event(BackendGraphExec e, BackendGraphNode n, bool wait, BackendEvent ev) {
    if (e) {
        const auto set = wait ? KVMGPU_CUDA_LATE(api_, cuGraphExecEventWaitNodeSetEvent, 11010)
                              : KVMGPU_CUDA_LATE(api_, cuGraphExecEventRecordNodeSetEvent, 11010);
        if (!set) return VGPU_ERROR_NOT_SUPPORTED;
        return to_status(set(exec(e), node(n), event(ev)));
    }
    const auto set = wait ? KVMGPU_CUDA_LATE(api_, cuGraphEventWaitNodeSetEvent, 11010)
                          : KVMGPU_CUDA_LATE(api_, cuGraphEventRecordNodeSetEvent, 11010);
    if (!set) return VGPU_ERROR_NOT_SUPPORTED;
    return to_status(set(node(n), event(ev)));
}

Status CudaGraphs::node_event(BackendGraphNode n, bool wait, BackendEvent* out) {
    const auto get = wait ? KVMGPU_CUDA_LATE(api_, cuGraphEventWaitNodeGetEvent, 11010)
                          : KVMGPU_CUDA_LATE(api_, cuGraphEventRecordNodeGetEvent, 11010);
    if (!get) return VGPU_ERROR_NOT_SUPPORTED;
    CUevent ev = nullptr;
    CU_TRY(get(node(n), &ev));
    *out = reinterpret_cast<BackendEvent>(ev);
    return VGPU_SUCCESS;
}

Status CudaGraphs::set_enabled(BackendGraphExec e, BackendGraphNode n, bool on) {
    const auto set = KVMGPU_CUDA_LATE(api_, cuGraphNodeSetEnabled, 11060);
    if (!set) return VGPU_ERROR_NOT_SUPPORTED;
    return to_status(set(exec(e), node(n), on ? 1u : 0u));
}

Status CudaGraphs::enabled(BackendGraphExec e, BackendGraphNode n, bool* out) {
    const auto get = KVMGPU_CUDA_LATE(api_, cuGraphNodeGetEnabled, 11060);
    if (!get) return VGPU_ERROR_NOT_SUPPORTED;
    unsigned int on = 0;
    CU_TRY(get(exec(e), node(n), &on));
    *out = on != 0;
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
