// CUDA graphs and stream capture as the device model asks a backend for
// them (GpuBackend::graphs()): graphs, their nodes, executable graphs and
// the capture of a stream's work. Every value is already validated and
// translated by the device model (handles resolved, device ranges the VM's,
// host pointers inside guest RAM, kernel parameters the function's layout).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

// Opaque backend objects (CUgraph, CUgraphExec, CUgraphNode as integers).
using BackendGraph = uintptr_t;
using BackendGraphExec = uintptr_t;
using BackendGraphNode = uintptr_t;

// One node's work. Kernel: `params` is laid out by `*layout` (the
// function's own, params.size() == layout->total_bytes()); the backend
// keeps its own copy. Memcpy: `direction` is VGPU_OP_MEMCPY_HTOD (host ->
// dst), _DTOH (src -> host) or _DTOD (src -> dst); host points into guest
// RAM, which stays registered for the VM's life. Memset: count elements of
// element_bytes (1, 2, 4) from dst. EventRecord, EventWait: records or
// waits for `event` (the device model keeps it alive while nodes name it).
// MemFree: frees the graph allocation at dst (a MemAlloc node's, made by
// add_alloc_node or alloc_in_capture). Conditional, ChildGraph: made only
// by add_conditional_node and add_child_graph_node (a backend's own record
// of the node's kind).
struct GraphNodeSpec {
    enum class Kind { Empty, Kernel, Memcpy, Memset, EventRecord, EventWait, MemAlloc, MemFree, Conditional, ChildGraph };
    Kind kind = Kind::Empty;
    BackendFunction function = 0;
    Dim3 grid, block;
    uint32_t shared_bytes = 0;
    std::span<const uint8_t> params;
    const ParamLayout* layout = nullptr;
    uint16_t direction = 0;
    uint64_t dst = 0, src = 0, bytes = 0;
    void* host = nullptr;
    uint32_t value = 0, element_bytes = 0;
    uint64_t count = 0;
    BackendEvent event = 0;
    // Nodes of the same graph the new node depends on, given with it (one
    // driver call, as the program made it).
    std::span<const BackendGraphNode> dependencies;
};

// CUstreamCaptureStatus.
enum CaptureStatus : uint32_t { kCaptureNone = 0, kCaptureActive = 1, kCaptureInvalidated = 2 };
constexpr uint32_t kCaptureModes = 3; // CU_STREAM_CAPTURE_MODE_GLOBAL, _THREAD_LOCAL, _RELAXED

class GraphBackend {
public:
    virtual ~GraphBackend() = default;

    // cuStreamBeginCapture (mode: CUstreamCaptureMode) on a created stream;
    // cuStreamEndCapture on the stream it began on: the captured graph, now
    // the caller's. capture_status: cuStreamGetCaptureInfo's status and id.
    virtual Status begin_capture(BackendStream s, uint32_t mode) = 0;
    virtual Status end_capture(BackendStream s, BackendGraph* out) = 0;
    virtual Status capture_status(BackendStream s, uint32_t* status, uint64_t* id) = 0;

    virtual Status graph_create(BackendGraph* out) = 0;
    virtual Status graph_destroy(BackendGraph g) = 0;
    // A node without dependencies.
    virtual Status add_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out) = 0;
    // A kernel node's new parameters, in the graph (exec 0) or only in exec.
    virtual Status set_kernel_params(BackendGraphExec exec, BackendGraphNode node, const GraphNodeSpec& spec) = 0;
    // Adds (or removes) the edge from -> to; both are g's.
    virtual Status dependency(BackendGraph g, BackendGraphNode from, BackendGraphNode to, bool remove) = 0;
    virtual Status nodes(BackendGraph g, std::vector<BackendGraphNode>* out) = 0;
    virtual Status destroy_node(BackendGraphNode node) = 0;
    // g's edges (from, to), in the order the graph lists them.
    virtual Status edges(BackendGraph g, std::vector<std::pair<BackendGraphNode, BackendGraphNode>>* out) = 0;
    // cuGraphNodeGetType: a CUgraphNodeType number.
    virtual Status node_type(BackendGraphNode node, uint32_t* type) = 0;
    // cuGraphClone: a new graph with g's nodes and edges; *map pairs each
    // node of g with its copy (cuGraphNodeFindInClone's answers).
    virtual Status clone(BackendGraph g, BackendGraph* out,
                         std::vector<std::pair<BackendGraphNode, BackendGraphNode>>* map) = 0;

    // An event node's event (wait: the node is a wait node, else a record
    // node; the other kind is INVALID_VALUE), in the graph (exec 0) or only in exec.
    virtual Status set_node_event(BackendGraphExec exec, BackendGraphNode node, bool wait, BackendEvent e) = 0;
    virtual Status node_event(BackendGraphNode node, bool wait, BackendEvent* out) = 0;
    // cuGraphNodeSetEnabled / GetEnabled: node is of the graph exec was
    // instantiated from; kernel, memcpy and memset nodes only.
    virtual Status set_enabled(BackendGraphExec exec, BackendGraphNode node, bool enabled) = 0;
    virtual Status enabled(BackendGraphExec exec, BackendGraphNode node, bool* out) = 0;

    // Graph memory. An allocation node of spec.bytes on the backend's device;
    // *dptr its address, fixed for the node's life. In a capture (s
    // capturing): cuMemAllocAsync's node, cuMemFreeAsync's node. Outside
    // one: a graph allocation freed on s. release_graph_allocation: no graph
    // or exec holds the node any more (the driver dropped the address with
    // them; a backend that made it itself frees it now).
    virtual Status add_alloc_node(BackendGraph, const GraphNodeSpec&, BackendGraphNode*, uint64_t*) {
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    virtual Status alloc_in_capture(BackendStream, uint64_t, uint64_t*) { return VGPU_ERROR_NOT_SUPPORTED; }
    virtual Status free_graph_allocation(BackendStream, uint64_t) { return VGPU_ERROR_NOT_SUPPORTED; }
    virtual void release_graph_allocation(uint64_t) {}

    // Conditional nodes (CUDA 12.3): a conditional of g (its default value
    // and CUgraphConditionalHandleFlags), then a node of g testing it
    // (CUgraphConditionalNodeType), whose `size` body graphs the driver
    // makes and owns. And the graph under a capture: the graph s captures
    // into and the capture's dependencies now; changing them (flags 0 add,
    // 1 set); a capture into an existing graph g after deps. A backend
    // without them answers NOT_SUPPORTED.
    virtual Status conditional_create(BackendGraph, uint32_t, uint32_t, uint64_t*) { return VGPU_ERROR_NOT_SUPPORTED; }
    virtual Status add_conditional_node(BackendGraph, uint64_t, uint32_t, uint32_t, BackendGraphNode*,
                                        std::vector<BackendGraph>*) {
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    virtual Status capture_graph(BackendStream, BackendGraph*, std::vector<BackendGraphNode>*) {
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    virtual Status update_capture_dependencies(BackendStream, std::span<const BackendGraphNode>, uint32_t) {
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    virtual Status begin_capture_to_graph(BackendStream, BackendGraph, std::span<const BackendGraphNode>, uint32_t) {
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    // A node of g holding a copy of `child` (cuGraphAddChildGraphNode), and
    // the graph a child graph node holds (the node's; *out 0 for a node of
    // another kind).
    virtual Status add_child_graph_node(BackendGraph, BackendGraph, BackendGraphNode*) { return VGPU_ERROR_NOT_SUPPORTED; }
    virtual Status child_graph(BackendGraphNode, BackendGraph*) { return VGPU_ERROR_NOT_SUPPORTED; }

    // flags: CUgraphInstantiate_flags the device model accepted (AUTO_FREE_ON_LAUNCH, USE_NODE_PRIORITY).
    virtual Status instantiate(BackendGraph g, uint64_t flags, BackendGraphExec* out) = 0;
    virtual Status exec_destroy(BackendGraphExec e) = 0;
    // *result: CUgraphExecUpdateResult (0 success); the status is
    // GRAPH_EXEC_UPDATE_FAILURE's when the update was refused.
    virtual Status exec_update(BackendGraphExec e, BackendGraph g, uint32_t* result) = 0;
    // cuGraphLaunch, or cuGraphUpload when upload_only.
    virtual Status launch(BackendGraphExec e, BackendStream s, bool upload_only) = 0;
};

} // namespace kvmgpu::vgpu
