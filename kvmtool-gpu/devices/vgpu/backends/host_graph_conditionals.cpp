// The host backend's conditional and child graph nodes, and the graph
// under a capture.
// A capture replays its nodes in the order they were recorded, which every
// dependency the program names respects; so a capture's dependencies are
// its last node, and changing them changes nothing the replay needs.
#include "kvmtool-gpu/devices/vgpu/backends/host_graphs.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint32_t kIf = 0, kWhile = 1, kSwitch = 2; // CUgraphConditionalNodeType
constexpr uint32_t kAssignDefault = 1;               // CU_GRAPH_COND_ASSIGN_DEFAULT
} // namespace

Status HostGraphs::conditional_create(BackendGraph g, uint32_t default_value, uint32_t flags, uint64_t* out) {
    if (!graphs_.count(g)) return VGPU_ERROR_INVALID_HANDLE;
    *out = next_id_++;
    conditionals_[*out] = Conditional{g, default_value, flags, default_value};
    return VGPU_SUCCESS;
}

Status HostGraphs::add_conditional_node(BackendGraph g, uint64_t conditional, uint32_t type, uint32_t size,
                                        BackendGraphNode* out, std::vector<BackendGraph>* bodies) {
    const auto it = graphs_.find(g);
    if (it == graphs_.end()) return VGPU_ERROR_INVALID_HANDLE;
    if (!conditionals_.count(conditional) || size == 0) return VGPU_ERROR_INVALID_VALUE;
    if (type == kWhile) return VGPU_ERROR_NOT_SUPPORTED; // nothing here could end the loop
    if (type != kIf && type != kSwitch) return VGPU_ERROR_INVALID_VALUE;
    bodies->clear();
    for (uint32_t i = 0; i < size; ++i) {
        bodies->push_back(next_id_++);
        graphs_[bodies->back()];
    }
    *out = next_id_++;
    auto run = [this, conditional, type, made = *bodies]() -> Status {
        const auto c = conditionals_.find(conditional);
        if (c == conditionals_.end()) return VGPU_ERROR_INVALID_VALUE;
        const uint32_t v = c->second.value;
        if (type == kIf) return v != 0 ? run_body(made[0]) : made.size() == 2 ? run_body(made[1]) : VGPU_SUCCESS;
        return v < made.size() ? run_body(made[v]) : VGPU_SUCCESS;
    };
    it->second.nodes.push_back(Node{*out, GraphNodeSpec::Kind::Conditional, run, 0, true});
    bodies_[*out] = *bodies;
    return VGPU_SUCCESS;
}

void HostGraphs::drop_bodies(BackendGraphNode node) {
    const auto it = bodies_.find(node);
    if (it == bodies_.end()) return;
    const std::vector<BackendGraph> bodies = std::move(it->second);
    bodies_.erase(it);
    for (BackendGraph b : bodies) graph_destroy(b);
}

void HostGraphs::assign_defaults() {
    for (auto& [handle, c] : conditionals_)
        if (c.flags & kAssignDefault) c.value = c.default_value;
}

Status HostGraphs::run_body(BackendGraph g) {
    const auto it = graphs_.find(g);
    if (it == graphs_.end()) return VGPU_ERROR_INVALID_VALUE;
    std::vector<size_t> order;
    if (!topological(it->second, &order)) return VGPU_ERROR_INVALID_VALUE;
    for (size_t i : order)
        if (const Node& n = it->second.nodes[i]; n.enabled)
            if (const Status st = n.run(); st != VGPU_SUCCESS) return st;
    return VGPU_SUCCESS;
}

Status HostGraphs::capture_graph(BackendStream s, BackendGraph* g, std::vector<BackendGraphNode>* deps) {
    if (!capturing(s)) return VGPU_ERROR_ILLEGAL_STATE;
    const Capture& c = captures_.at(stream_capture_.at(s));
    if (c.invalidated) return VGPU_ERROR_STREAM_CAPTURE_INVALIDATED;
    *g = c.graph;
    deps->clear();
    const Graph& graph = graphs_.at(c.graph);
    if (!graph.nodes.empty()) deps->push_back(graph.nodes.back().id);
    return VGPU_SUCCESS;
}

Status HostGraphs::update_capture_dependencies(BackendStream s, std::span<const BackendGraphNode> deps, uint32_t) {
    if (!capturing(s)) return VGPU_ERROR_ILLEGAL_STATE;
    const Capture& c = captures_.at(stream_capture_.at(s));
    for (BackendGraphNode n : deps) {
        Graph* owner = nullptr;
        if (!node_of(n, &owner) || owner != &graphs_.at(c.graph)) return VGPU_ERROR_INVALID_VALUE;
    }
    return c.invalidated ? VGPU_ERROR_STREAM_CAPTURE_INVALIDATED : VGPU_SUCCESS;
}

Status HostGraphs::begin_capture_to_graph(BackendStream s, BackendGraph g, std::span<const BackendGraphNode> deps,
                                          uint32_t) {
    if (s == 0) return VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (capturing(s)) return VGPU_ERROR_ILLEGAL_STATE;
    const auto it = graphs_.find(g);
    if (it == graphs_.end()) return VGPU_ERROR_INVALID_HANDLE;
    for (BackendGraphNode n : deps) {
        Graph* owner = nullptr;
        if (!node_of(n, &owner) || owner != &it->second) return VGPU_ERROR_INVALID_VALUE;
    }
    const uint64_t id = next_id_++;
    captures_[id] = Capture{g, s, false, true};
    stream_capture_[s] = id;
    return VGPU_SUCCESS;
}

// The node's graph is a copy of the child made now (clone()'s), run whole when the node runs.
Status HostGraphs::add_child_graph_node(BackendGraph g, BackendGraph child, BackendGraphNode* out) {
    if (!graphs_.count(g) || !graphs_.count(child)) return VGPU_ERROR_INVALID_HANDLE;
    BackendGraph copy = 0; // clone adds a graph: `g` is looked up again after it
    std::vector<std::pair<BackendGraphNode, BackendGraphNode>> map;
    if (const Status st = clone(child, &copy, &map); st != VGPU_SUCCESS) return st;
    *out = next_id_++;
    graphs_.at(g).nodes.push_back(Node{*out, GraphNodeSpec::Kind::ChildGraph, [this, copy] { return run_body(copy); }, 0, true});
    bodies_[*out] = {copy};
    return VGPU_SUCCESS;
}

Status HostGraphs::child_graph(BackendGraphNode node, BackendGraph* out) {
    const Node* n = node_of(node);
    const auto it = bodies_.find(node);
    if (!n || n->kind != GraphNodeSpec::Kind::ChildGraph || it == bodies_.end()) return VGPU_ERROR_INVALID_VALUE;
    *out = it->second.front();
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
