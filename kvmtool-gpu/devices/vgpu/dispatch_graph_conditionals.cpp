// Conditional nodes (their conditionals, the body graphs the driver makes
// for them), child graph nodes (the copy of the child each holds) and the
// graph under a capture (named to the guest, its
// dependencies changed, a capture into a graph the guest made): what
// NVIDIA's graphConditionalNodes sample builds its graphs with.
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {

// CUgraphConditionalNodeType, and CU_GRAPH_COND_ASSIGN_DEFAULT, the one flag.
constexpr uint64_t kConditionalIf = 0, kConditionalWhile = 1, kConditionalSwitch = 2;
constexpr uint64_t kConditionalFlags = 1;

// The body graphs a node of this type may have: IF one or two (if/else), WHILE one, SWITCH up to the payload's room.
bool bodies_allowed(uint64_t type, uint64_t size) {
    switch (type) {
    case kConditionalIf: return size == 1 || size == 2;
    case kConditionalWhile: return size == 1;
    case kConditionalSwitch: return size >= 1 && size <= VGPU_CONDITIONAL_BODIES;
    default: return false;
    }
}

} // namespace

std::optional<uint64_t> CommandDispatch::handle_of_graph(BackendGraph g) {
    std::optional<uint64_t> found;
    graphs_.for_each([&](uint64_t h, const GraphEntry& e) {
        if (e.graph == g) found = h;
    });
    return found;
}

std::vector<uint64_t> CommandDispatch::bodies_of(uint64_t graph, BackendGraphNode node) {
    std::vector<uint64_t> bodies;
    graphs_.for_each([&](uint64_t h, const GraphEntry& e) {
        if (e.body_of == graph && (node == 0 || e.body_node == node)) bodies.push_back(h);
    });
    return bodies;
}

uint64_t CommandDispatch::nodes_with_bodies(uint64_t graph) {
    const GraphEntry* g = graphs_.find(graph, ctx_);
    uint64_t n = g ? g->nodes : 0;
    for (uint64_t b : bodies_of(graph, 0)) n += nodes_with_bodies(b);
    return n;
}

void CommandDispatch::forget_bodies(uint64_t graph, BackendGraphNode node) {
    for (uint64_t h : bodies_of(graph, node)) {
        auto e = graphs_.erase(h, ctx_);
        if (!e) continue;
        forget_graph(*e);
        drop_graph_allocations(e->allocations);
        forget_bodies(h, 0);
    }
}

uint64_t CommandDispatch::settle_capture_graph(BackendStream s, bool kept) {
    uint64_t made = 0;
    graphs_.for_each([&](uint64_t h, const GraphEntry& e) {
        if (e.capture_stream == s) made = h;
    });
    if (made == 0) return 0;
    if (kept) {
        graphs_.find(made, ctx_)->capture_stream = 0;
        return made;
    }
    if (auto e = graphs_.erase(made, ctx_)) {
        forget_graph(*e);
        forget_bodies(made, 0);
    }
    return 0;
}

const char* CommandDispatch::nodes_of_graph(uint64_t graph, const uint8_t* payload, uint64_t count,
                                            std::vector<BackendGraphNode>* out) {
    out->clear();
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t h;
        std::memcpy(&h, payload + i * 8, 8);
        const GraphNodeEntry* n = graph_nodes_.find(h, ctx_);
        if (!n) return "graph node handle";
        if (n->graph != graph) return "a dependency of another graph";
        out->push_back(n->node);
    }
    return nullptr;
}

// Counted as a node of its graph: the driver keeps state for each.
CommandResult CommandDispatch::op_GRAPH_CONDITIONAL_CREATE(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_GRAPH_CONDITIONAL_CREATE>(c);
    GraphEntry* g = graphs_.find(a.graph, ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    if (a.default_value > UINT32_MAX || (a.flags & ~kConditionalFlags)) return fail(VGPU_ERROR_INVALID_VALUE, "conditional default or flags");
    if (graph_node_count_ >= opts_.max_graph_nodes) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph nodes past max_graph_nodes");
    uint64_t h = 0;
    const Status st = backend_result(graph_backend()->conditional_create(g->graph, static_cast<uint32_t>(a.default_value),
                                                                         static_cast<uint32_t>(a.flags), &h));
    if (st != VGPU_SUCCESS) return done(st);
    g->conditionals.push_back(h);
    ++g->nodes, ++graph_node_count_;
    return done(VGPU_SUCCESS, h);
}

// The conditional must be one made for this graph or a graph holding it as a body.
CommandResult CommandDispatch::op_GRAPH_ADD_CONDITIONAL_NODE(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_GRAPH_ADD_CONDITIONAL_NODE>(c);
    GraphEntry* g = graphs_.find(a.graph, ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    if (!bodies_allowed(a.type, a.size)) return fail(VGPU_ERROR_INVALID_VALUE, "conditional node type or body count");
    bool known = false;
    for (uint64_t at = a.graph; at != 0 && !known;) {
        const GraphEntry* e = graphs_.find(at, ctx_);
        if (!e) break;
        for (uint64_t h : e->conditionals) known = known || h == a.conditional;
        at = e->body_of;
    }
    if (!known) return fail(VGPU_ERROR_INVALID_VALUE, "conditional not made for this graph");
    if (graph_node_count_ >= opts_.max_graph_nodes) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph nodes past max_graph_nodes");
    if (graph_nodes_.size() >= graph_nodes_.capacity() || graphs_.size() + a.size > graphs_.capacity())
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph or graph node table full");
    BackendGraphNode n = 0;
    std::vector<BackendGraph> bodies;
    const Status st = backend_result(graph_backend()->add_conditional_node(
        g->graph, a.conditional, static_cast<uint32_t>(a.type), static_cast<uint32_t>(a.size), &n, &bodies));
    if (st != VGPU_SUCCESS) return done(st);
    ++g->nodes, ++graph_node_count_;
    const uint64_t node = *node_handle(a.graph, *g, n); // room checked above
    c.payload.fill(0);
    for (size_t i = 0; i < bodies.size() && i < a.size; ++i) {
        GraphEntry body{bodies[i], 0, {}, 0, {}, {}, {}};
        body.body_of = a.graph, body.body_node = n;
        const uint64_t h = *graphs_.insert(body, ctx_); // room checked above
        std::memcpy(c.payload.data() + i * 8, &h, 8);
    }
    CommandResult r = done(VGPU_SUCCESS, node);
    r.write_payload = true;
    return r;
}

// The graph (a handle issued now if the capture made it) and the capture's dependencies from `first`.
CommandResult CommandDispatch::op_STREAM_CAPTURE_GRAPH(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_STREAM_CAPTURE_GRAPH>(c);
    GraphBackend* gb = graph_backend();
    if (!gb) return fail(VGPU_ERROR_NOT_SUPPORTED, "this backend has no CUDA graphs");
    BackendStream s;
    if (a.stream == 0 || !stream_of(a.stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    BackendGraph g = 0;
    std::vector<BackendGraphNode> deps;
    if (const Status st = backend_result(gb->capture_graph(s, &g, &deps)); st != VGPU_SUCCESS) return done(st);
    std::optional<uint64_t> graph = handle_of_graph(g);
    if (!graph) {
        if (graphs_.size() >= graphs_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph table full");
        GraphEntry entry{g, 0, {}, 0, {}, {}, {}};
        entry.capture_stream = s;
        graph = graphs_.insert(entry, ctx_);
    }
    if (a.first > deps.size()) return fail(VGPU_ERROR_INVALID_VALUE, "first dependency past the last");
    GraphEntry* e = graphs_.find(*graph, ctx_);
    c.payload.fill(0);
    const uint64_t n = std::min<uint64_t>(deps.size() - a.first, VGPU_CAPTURE_DEPENDENCIES);
    for (uint64_t i = 0; i < n; ++i) {
        const auto h = node_handle(*graph, *e, deps[a.first + i]);
        if (!h) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph node table full");
        std::memcpy(c.payload.data() + i * 8, &*h, 8);
    }
    CommandResult r = done(VGPU_SUCCESS, *graph, deps.size());
    r.write_payload = true;
    return r;
}

CommandResult CommandDispatch::op_STREAM_UPDATE_CAPTURE_DEPENDENCIES(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_STREAM_UPDATE_CAPTURE_DEPENDENCIES>(c);
    GraphBackend* gb = graph_backend();
    if (!gb) return fail(VGPU_ERROR_NOT_SUPPORTED, "this backend has no CUDA graphs");
    BackendStream s;
    if (a.stream == 0 || !stream_of(a.stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (a.count > VGPU_CAPTURE_DEPENDENCIES || a.count * 8 > c.desc.payload_len || a.flags > 1)
        return fail(VGPU_ERROR_INVALID_VALUE, "dependency count or flags");
    BackendGraph g = 0;
    std::vector<BackendGraphNode> now;
    if (const Status st = backend_result(gb->capture_graph(s, &g, &now)); st != VGPU_SUCCESS) return done(st);
    const std::optional<uint64_t> graph = handle_of_graph(g);
    std::vector<BackendGraphNode> deps;
    if (a.count && !graph) return fail(VGPU_ERROR_INVALID_VALUE, "dependencies of a graph the guest never named");
    if (a.count)
        if (const char* why = nodes_of_graph(*graph, c.payload.data(), a.count, &deps)) return fail(VGPU_ERROR_INVALID_VALUE, why);
    return done(backend_result(gb->update_capture_dependencies(s, deps, static_cast<uint32_t>(a.flags))));
}

// A capture into the guest's graph: it stays the guest's, and END_CAPTURE names it again.
CommandResult CommandDispatch::op_STREAM_BEGIN_CAPTURE_TO_GRAPH(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH>(c);
    GraphBackend* gb = graph_backend();
    if (!gb) return fail(VGPU_ERROR_NOT_SUPPORTED, "this backend has no CUDA graphs");
    BackendStream s;
    if (a.stream == 0) return fail(VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED, "the default stream cannot capture");
    if (!stream_of(a.stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (a.mode >= kCaptureModes) return fail(VGPU_ERROR_INVALID_VALUE, "capture mode");
    const GraphEntry* g = graphs_.find(a.graph, ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    if (a.count > VGPU_CAPTURE_DEPENDENCIES || a.count * 8 > c.desc.payload_len)
        return fail(VGPU_ERROR_INVALID_VALUE, "dependency count");
    std::vector<BackendGraphNode> deps;
    if (const char* why = nodes_of_graph(a.graph, c.payload.data(), a.count, &deps)) return fail(VGPU_ERROR_INVALID_VALUE, why);
    const Status st = backend_result(gb->begin_capture_to_graph(s, g->graph, deps, static_cast<uint32_t>(a.mode)));
    return done(capture_began(s, st));
}

// The node's copy of the child is a graph of the node's, counted with it.
CommandResult CommandDispatch::op_GRAPH_ADD_CHILD_GRAPH_NODE(GuestCommand& c) {
    const auto [graph, child] = args_of<VGPU_OP_GRAPH_ADD_CHILD_GRAPH_NODE>(c);
    GraphEntry* g = graphs_.find(graph, ctx_);
    const GraphEntry* ch = graphs_.find(child, ctx_);
    if (!g || !ch) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    if (graph == child) return fail(VGPU_ERROR_INVALID_VALUE, "a graph cannot hold itself");
    if (ch->capture_stream) return fail(VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED, "the graph of a capture still running");
    const uint64_t copied = nodes_with_bodies(child);
    if (graph_node_count_ + 1 + copied > opts_.max_graph_nodes)
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph nodes past max_graph_nodes");
    if (graph_nodes_.size() >= graph_nodes_.capacity() || graphs_.size() >= graphs_.capacity())
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph or graph node table full");
    const std::vector<GuestRamUse> child_ram = ch->guest_ram;
    GraphBackend* gb = graph_backend();
    BackendGraphNode n = 0;
    if (const Status st = backend_result(gb->add_child_graph_node(g->graph, ch->graph, &n)); st != VGPU_SUCCESS)
        return done(st);
    BackendGraph copy = 0;
    if (const Status st = backend_result(gb->child_graph(n, &copy)); st != VGPU_SUCCESS) {
        gb->destroy_node(n);
        return done(st);
    }
    g = graphs_.find(graph, ctx_);
    ++g->nodes, ++graph_node_count_;
    const uint64_t node = *node_handle(graph, *g, n); // room checked above
    for (GuestRamUse u : child_ram) { // a remote copy of guest RAM: the parent's launches fetch them
        u.node = n;
        g->guest_ram.push_back(u);
    }
    GraphEntry body{copy, copied, {}, 0, {}, {}, {}};
    body.body_of = graph, body.body_node = n;
    graph_node_count_ += copied;
    return done(VGPU_SUCCESS, node, *graphs_.insert(body, ctx_)); // room checked above
}

// A child graph node's graph: named on first sight (a graph launched into a
// capture becomes a child graph node the guest never made), counted then.
CommandResult CommandDispatch::op_GRAPH_CHILD_GRAPH(GuestCommand& c) {
    const GraphNodeEntry* n = graph_nodes_.find(args_of<VGPU_OP_GRAPH_CHILD_GRAPH>(c).handle, ctx_);
    if (!n) return fail(VGPU_ERROR_INVALID_HANDLE, "graph node handle");
    const uint64_t graph = n->graph;
    const BackendGraphNode node = n->node;
    GraphBackend* gb = graph_backend();
    uint32_t type = 0;
    if (gb->node_type(node, &type) != VGPU_SUCCESS || type != 4 /* CU_GRAPH_NODE_TYPE_GRAPH */)
        return fail(VGPU_ERROR_INVALID_VALUE, "not a child graph node");
    if (const std::vector<uint64_t> named = bodies_of(graph, node); !named.empty()) return done(VGPU_SUCCESS, named.front());
    if (graphs_.size() >= graphs_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph table full");
    BackendGraph copy = 0;
    if (const Status st = backend_result(gb->child_graph(node, &copy)); st != VGPU_SUCCESS) return done(st);
    std::vector<BackendGraphNode> nodes;
    if (const Status st = backend_result(gb->nodes(copy, &nodes)); st != VGPU_SUCCESS) return done(st);
    if (graph_node_count_ + nodes.size() > opts_.max_graph_nodes)
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph nodes past max_graph_nodes");
    GraphEntry body{copy, nodes.size(), {}, 0, {}, {}, {}};
    body.body_of = graph, body.body_node = node;
    graph_node_count_ += nodes.size();
    return done(VGPU_SUCCESS, *graphs_.insert(body, ctx_));
}

} // namespace kvmgpu::vgpu
