// Handlers that read a graph's shape (its edges, roots, a node's type) and
// copy it (GRAPH_CLONE, GRAPH_NODE_FIND_IN_CLONE). The answers are the
// backend's graph as it is now; every node named back to the guest is a
// handle of this VM's (issued on first sight, as GRAPH_GET_NODES issues them).
#include <algorithm>
#include <cstring>
#include <set>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

// A copy counts its nodes against max_graph_nodes as a new graph's would.
CommandResult CommandDispatch::op_GRAPH_CLONE(GuestCommand& c) {
    const uint64_t graph = args_of<VGPU_OP_GRAPH_CLONE>(c).handle;
    const GraphEntry* g = graphs_.find(graph, ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    if (graphs_.size() >= graphs_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph table full");
    const uint64_t nodes = g->nodes;
    if (graph_node_count_ + nodes > opts_.max_graph_nodes)
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "clone's nodes past max_graph_nodes");
    BackendGraph copy = 0;
    std::vector<std::pair<BackendGraphNode, BackendGraphNode>> map;
    const Status st = backend_result(graph_backend()->clone(g->graph, &copy, &map));
    if (st != VGPU_SUCCESS) return done(st);
    GraphEntry entry{copy, nodes, {}, graph, {}, g->allocations, g->guest_ram};
    entry.copies.insert(map.begin(), map.end());
    for (GuestRamUse& u : entry.guest_ram) // the clone's copy of each copy node
        for (const auto& [original, mine] : map)
            if (u.node == original) u.node = mine;
    hold_graph_allocations(entry.allocations);
    graph_node_count_ += nodes;
    return done(VGPU_SUCCESS, *graphs_.insert(entry, ctx_)); // room checked above
}

// The clone's copy of a node the original had when it was cloned.
CommandResult CommandDispatch::op_GRAPH_NODE_FIND_IN_CLONE(GuestCommand& c) {
    const auto [clone, original] = args_of<VGPU_OP_GRAPH_NODE_FIND_IN_CLONE>(c);
    GraphEntry* g = graphs_.find(clone, ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    const GraphNodeEntry* n = graph_nodes_.find(original, ctx_);
    if (!n) return fail(VGPU_ERROR_INVALID_HANDLE, "graph node handle");
    if (g->cloned_from == 0 || n->graph != g->cloned_from)
        return fail(VGPU_ERROR_INVALID_VALUE, "node not of the graph this one was cloned from");
    const auto it = g->copies.find(n->node);
    if (it == g->copies.end()) return fail(VGPU_ERROR_INVALID_VALUE, "node added after the clone, or its copy destroyed");
    const auto h = node_handle(clone, *g, it->second);
    if (!h) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph node table full");
    return done(VGPU_SUCCESS, *h);
}

const char* CommandDispatch::graph_edge_pairs(uint64_t handle, uint64_t kind, uint64_t* graph,
                                              std::vector<std::pair<BackendGraphNode, BackendGraphNode>>* out,
                                              Status* st) {
    *st = VGPU_ERROR_INVALID_HANDLE;
    BackendGraphNode node = 0;
    if (kind == VGPU_GRAPH_EDGES_INTO || kind == VGPU_GRAPH_EDGES_FROM) {
        const GraphNodeEntry* n = graph_nodes_.find(handle, ctx_);
        if (!n) return "graph node handle";
        *graph = n->graph, node = n->node;
    } else if (kind == VGPU_GRAPH_EDGES_ALL || kind == VGPU_GRAPH_EDGES_ROOTS) {
        *graph = handle;
    } else {
        *st = VGPU_ERROR_INVALID_VALUE;
        return "edge question";
    }
    const GraphEntry* g = graphs_.find(*graph, ctx_);
    if (!g) return "graph handle";
    std::vector<std::pair<BackendGraphNode, BackendGraphNode>> all;
    *st = backend_result(graph_backend()->edges(g->graph, &all));
    if (*st != VGPU_SUCCESS) return "";
    out->clear();
    if (kind == VGPU_GRAPH_EDGES_ROOTS) {
        std::vector<BackendGraphNode> nodes;
        *st = backend_result(graph_backend()->nodes(g->graph, &nodes));
        if (*st != VGPU_SUCCESS) return "";
        std::set<BackendGraphNode> has_dependency;
        for (const auto& e : all) has_dependency.insert(e.second);
        for (BackendGraphNode n : nodes)
            if (!has_dependency.count(n)) out->emplace_back(0, n);
    } else {
        for (const auto& e : all)
            if (kind == VGPU_GRAPH_EDGES_ALL || (kind == VGPU_GRAPH_EDGES_INTO ? e.second : e.first) == node)
                out->push_back(e);
    }
    return nullptr;
}

// -> result0 the pairs' count; payload <- pairs from `first` on, as node handles.
CommandResult CommandDispatch::op_GRAPH_EDGES(GuestCommand& c) {
    const auto [handle, first, kind] = args_of<VGPU_OP_GRAPH_EDGES>(c);
    uint64_t graph = 0;
    std::vector<std::pair<BackendGraphNode, BackendGraphNode>> pairs;
    Status st = VGPU_SUCCESS;
    if (const char* why = graph_edge_pairs(handle, kind, &graph, &pairs, &st)) return *why ? fail(st, why) : done(st);
    if (first > pairs.size()) return fail(VGPU_ERROR_INVALID_VALUE, "first pair past the last");
    GraphEntry* g = graphs_.find(graph, ctx_);
    const uint64_t n = std::min<uint64_t>(pairs.size() - first, VGPU_GRAPH_EDGES_PER_CALL);
    c.payload.fill(0);
    for (uint64_t i = 0; i < n; ++i) {
        const auto [from, to] = pairs[first + i];
        uint64_t ends[2] = {0, 0};
        const auto f = from ? node_handle(graph, *g, from) : std::optional<uint64_t>{0};
        const auto t = node_handle(graph, *g, to);
        if (!f || !t) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph node table full");
        ends[0] = *f, ends[1] = *t;
        std::memcpy(c.payload.data() + i * 16, ends, sizeof ends);
    }
    CommandResult r = done(VGPU_SUCCESS, pairs.size());
    r.write_payload = true;
    return r;
}

CommandResult CommandDispatch::op_GRAPH_NODE_GET_TYPE(GuestCommand& c) {
    const GraphNodeEntry* n = graph_nodes_.find(args_of<VGPU_OP_GRAPH_NODE_GET_TYPE>(c).handle, ctx_);
    if (!n) return fail(VGPU_ERROR_INVALID_HANDLE, "graph node handle");
    uint32_t type = 0;
    const Status st = backend_result(graph_backend()->node_type(n->node, &type));
    return done(st, type);
}

} // namespace kvmgpu::vgpu
