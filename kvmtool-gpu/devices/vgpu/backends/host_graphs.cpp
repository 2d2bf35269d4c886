#include "kvmtool-gpu/devices/vgpu/backends/host_graphs.h"

#include <algorithm>
#include <memory>

namespace kvmgpu::vgpu {

namespace {
constexpr uint32_t kUpdateTopologyChanged = 2; // CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED
constexpr uint32_t kUpdateNodeTypeChanged = 3; // CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED
} // namespace

std::function<Status()> HostGraphs::runner(const GraphNodeSpec& spec) {
    GpuBackend& d = device_;
    switch (spec.kind) {
    case GraphNodeSpec::Kind::Empty: return [] { return VGPU_SUCCESS; };
    case GraphNodeSpec::Kind::Kernel: {
        auto params = std::make_shared<std::vector<uint8_t>>(spec.params.begin(), spec.params.end());
        auto layout = std::make_shared<ParamLayout>(*spec.layout);
        return [&d, spec, params, layout] {
            return d.launch_packed(spec.function, spec.grid, spec.block, spec.shared_bytes, 0, *params, *layout, false);
        };
    }
    case GraphNodeSpec::Kind::Memcpy:
        if (spec.direction == VGPU_OP_MEMCPY_HTOD) return [&d, spec] { return d.memcpy_htod(spec.dst, spec.host, spec.bytes, 0, false); };
        if (spec.direction == VGPU_OP_MEMCPY_DTOH) return [&d, spec] { return d.memcpy_dtoh(spec.host, spec.src, spec.bytes, 0, false); };
        return [&d, spec] { return d.memcpy_dtod(spec.dst, spec.src, spec.bytes, 0, false); };
    case GraphNodeSpec::Kind::Memset:
        return [&d, spec] { return d.memset(spec.dst, spec.value, spec.element_bytes, spec.count, 0, false); };
    case GraphNodeSpec::Kind::EventRecord: return [&d, e = spec.event] { return d.event_record(e, 0); };
    case GraphNodeSpec::Kind::EventWait: return [&d, e = spec.event] { return d.stream_wait_event(0, e); };
    case GraphNodeSpec::Kind::MemAlloc: // the memory is made with the node and lives as long
    case GraphNodeSpec::Kind::MemFree: return [] { return VGPU_SUCCESS; };
    case GraphNodeSpec::Kind::Conditional: // add_conditional_node's
    case GraphNodeSpec::Kind::ChildGraph: break; // add_child_graph_node's
    }
    return [] { return VGPU_ERROR_INVALID_VALUE; };
}

Status HostGraphs::record(BackendStream s, GraphNodeSpec::Kind kind, std::function<Status()> run, bool async) {
    if (!async) return refuse_sync(s);
    Capture& c = captures_.at(stream_capture_.at(s));
    if (c.invalidated) return VGPU_ERROR_STREAM_CAPTURE_INVALIDATED;
    // Nodes replay in the order added, which is the order the streams of
    // the capture asked for them: a valid order for every dependency.
    graphs_[c.graph].nodes.push_back(Node{next_id_++, kind, std::move(run), 0, true});
    return VGPU_SUCCESS;
}

Status HostGraphs::refuse_sync(BackendStream s) {
    if (!capturing(s)) return VGPU_SUCCESS;
    captures_.at(stream_capture_.at(s)).invalidated = true;
    return VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

void HostGraphs::event_recorded(BackendEvent e, BackendStream s) {
    if (capturing(s))
        event_capture_[e] = stream_capture_.at(s);
    else
        event_capture_.erase(e);
}

void HostGraphs::stream_waits(BackendStream s, BackendEvent e) {
    const auto it = event_capture_.find(e);
    if (s == 0 || capturing(s) || it == event_capture_.end() || !captures_.count(it->second)) return;
    stream_capture_[s] = it->second;
}

void HostGraphs::forget_stream(BackendStream s) {
    if (!capturing(s)) return;
    captures_.at(stream_capture_.at(s)).invalidated = true;
    stream_capture_.erase(s);
}

void HostGraphs::clear() {
    graphs_.clear();
    conditionals_.clear();
    bodies_.clear();
    execs_.clear();
    captures_.clear();
    stream_capture_.clear();
    event_capture_.clear();
}

Status HostGraphs::begin_capture(BackendStream s, uint32_t) {
    if (s == 0) return VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (capturing(s)) return VGPU_ERROR_ILLEGAL_STATE;
    const uint64_t id = next_id_++;
    BackendGraph g = next_id_++;
    graphs_[g];
    captures_[id] = Capture{g, s};
    stream_capture_[s] = id;
    return VGPU_SUCCESS;
}

Status HostGraphs::end_capture(BackendStream s, BackendGraph* out) {
    if (!capturing(s)) return VGPU_ERROR_ILLEGAL_STATE;
    const uint64_t id = stream_capture_.at(s);
    const Capture c = captures_.at(id);
    if (c.origin != s) return VGPU_ERROR_STREAM_CAPTURE_UNMATCHED;
    std::erase_if(stream_capture_, [id](const auto& p) { return p.second == id; });
    std::erase_if(event_capture_, [id](const auto& p) { return p.second == id; });
    captures_.erase(id);
    if (c.invalidated) {
        if (!c.into_existing) graphs_.erase(c.graph);
        return VGPU_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    *out = c.graph;
    return VGPU_SUCCESS;
}

Status HostGraphs::capture_status(BackendStream s, uint32_t* status, uint64_t* id) {
    *status = kCaptureNone;
    *id = 0;
    if (!capturing(s)) return VGPU_SUCCESS;
    *id = stream_capture_.at(s);
    *status = captures_.at(*id).invalidated ? kCaptureInvalidated : kCaptureActive;
    return VGPU_SUCCESS;
}

Status HostGraphs::graph_create(BackendGraph* out) {
    *out = next_id_++;
    graphs_[*out];
    return VGPU_SUCCESS;
}

Status HostGraphs::graph_destroy(BackendGraph g) {
    const auto it = graphs_.find(g);
    if (it == graphs_.end()) return VGPU_ERROR_INVALID_HANDLE;
    std::vector<BackendGraphNode> nodes;
    for (const Node& n : it->second.nodes) nodes.push_back(n.id);
    graphs_.erase(it);
    std::erase_if(conditionals_, [g](const auto& c) { return c.second.graph == g; });
    for (BackendGraphNode n : nodes) drop_bodies(n);
    return VGPU_SUCCESS;
}

Status HostGraphs::add_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out) {
    const auto it = graphs_.find(g);
    if (it == graphs_.end()) return VGPU_ERROR_INVALID_HANDLE;
    for (const BackendGraphNode d : spec.dependencies) {
        Graph* owner = nullptr;
        if (!node_of(d, &owner) || owner != &it->second) return VGPU_ERROR_INVALID_VALUE;
    }
    *out = next_id_++;
    it->second.nodes.push_back(Node{*out, spec.kind, runner(spec), spec.event, true});
    for (const BackendGraphNode d : spec.dependencies) it->second.edges.insert({d, *out});
    return VGPU_SUCCESS;
}

HostGraphs::Node* HostGraphs::node_in(BackendGraphExec exec, BackendGraphNode id) {
    if (exec == 0) return node_of(id);
    const auto e = execs_.find(exec);
    if (e == execs_.end()) return nullptr;
    const auto at = e->second.at.find(id);
    return at == e->second.at.end() ? nullptr : &e->second.order[at->second];
}

Status HostGraphs::set_node_event(BackendGraphExec exec, BackendGraphNode node, bool wait, BackendEvent e) {
    Node* n = node_in(exec, node);
    const auto kind = wait ? GraphNodeSpec::Kind::EventWait : GraphNodeSpec::Kind::EventRecord;
    if (!n || n->kind != kind) return VGPU_ERROR_INVALID_VALUE;
    GraphNodeSpec spec;
    spec.kind = kind, spec.event = e;
    n->run = runner(spec), n->event = e;
    return VGPU_SUCCESS;
}

Status HostGraphs::node_event(BackendGraphNode node, bool wait, BackendEvent* out) {
    const Node* n = node_of(node);
    if (!n || n->kind != (wait ? GraphNodeSpec::Kind::EventWait : GraphNodeSpec::Kind::EventRecord))
        return VGPU_ERROR_INVALID_VALUE;
    *out = n->event;
    return VGPU_SUCCESS;
}

namespace {
bool can_disable(GraphNodeSpec::Kind k) {
    return k == GraphNodeSpec::Kind::Kernel || k == GraphNodeSpec::Kind::Memcpy || k == GraphNodeSpec::Kind::Memset;
}
} // namespace

Status HostGraphs::set_enabled(BackendGraphExec exec, BackendGraphNode node, bool enabled) {
    Node* n = exec ? node_in(exec, node) : nullptr;
    if (!n || !can_disable(n->kind)) return VGPU_ERROR_INVALID_VALUE;
    n->enabled = enabled;
    return VGPU_SUCCESS;
}

Status HostGraphs::enabled(BackendGraphExec exec, BackendGraphNode node, bool* out) {
    const Node* n = exec ? node_in(exec, node) : nullptr;
    if (!n || !can_disable(n->kind)) return VGPU_ERROR_INVALID_VALUE;
    *out = n->enabled;
    return VGPU_SUCCESS;
}

HostGraphs::Node* HostGraphs::node_of(BackendGraphNode id, Graph** graph) {
    for (auto& [handle, g] : graphs_)
        for (Node& n : g.nodes)
            if (n.id == id) {
                if (graph) *graph = &g;
                return &n;
            }
    return nullptr;
}

Status HostGraphs::set_kernel_params(BackendGraphExec exec, BackendGraphNode node, const GraphNodeSpec& spec) {
    Node* n = node_in(exec, node);
    if (!n) return VGPU_ERROR_INVALID_VALUE;
    if (n->kind != GraphNodeSpec::Kind::Kernel) return VGPU_ERROR_INVALID_VALUE;
    n->run = runner(spec);
    return VGPU_SUCCESS;
}

Status HostGraphs::dependency(BackendGraph g, BackendGraphNode from, BackendGraphNode to, bool remove) {
    Graph* owner = nullptr;
    if (!node_of(from, &owner) || owner != &graphs_[g] || !node_of(to, &owner) || owner != &graphs_[g])
        return VGPU_ERROR_INVALID_VALUE;
    if (remove) return graphs_[g].edges.erase({from, to}) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_VALUE;
    graphs_[g].edges.insert({from, to});
    return VGPU_SUCCESS;
}

Status HostGraphs::nodes(BackendGraph g, std::vector<BackendGraphNode>* out) {
    const auto it = graphs_.find(g);
    if (it == graphs_.end()) return VGPU_ERROR_INVALID_HANDLE;
    out->clear();
    for (const Node& n : it->second.nodes) out->push_back(n.id);
    return VGPU_SUCCESS;
}

Status HostGraphs::destroy_node(BackendGraphNode node) {
    Graph* g = nullptr;
    Node* n = node_of(node, &g);
    if (!n) return VGPU_ERROR_INVALID_VALUE;
    std::erase_if(g->edges, [node](const auto& e) { return e.first == node || e.second == node; });
    g->nodes.erase(g->nodes.begin() + (n - g->nodes.data()));
    drop_bodies(node);
    return VGPU_SUCCESS;
}

Status HostGraphs::edges(BackendGraph g, std::vector<std::pair<BackendGraphNode, BackendGraphNode>>* out) {
    const auto it = graphs_.find(g);
    if (it == graphs_.end()) return VGPU_ERROR_INVALID_HANDLE;
    out->assign(it->second.edges.begin(), it->second.edges.end());
    return VGPU_SUCCESS;
}

Status HostGraphs::node_type(BackendGraphNode node, uint32_t* type) {
    const Node* n = node_of(node);
    if (!n) return VGPU_ERROR_INVALID_VALUE;
    switch (n->kind) { // CUgraphNodeType
    case GraphNodeSpec::Kind::Kernel: *type = 0; break;
    case GraphNodeSpec::Kind::Memcpy: *type = 1; break;
    case GraphNodeSpec::Kind::Memset: *type = 2; break;
    case GraphNodeSpec::Kind::Empty: *type = 5; break;
    case GraphNodeSpec::Kind::EventWait: *type = 6; break;
    case GraphNodeSpec::Kind::EventRecord: *type = 7; break;
    case GraphNodeSpec::Kind::MemAlloc: *type = 10; break;
    case GraphNodeSpec::Kind::MemFree: *type = 11; break;
    case GraphNodeSpec::Kind::Conditional: *type = 13; break;
    case GraphNodeSpec::Kind::ChildGraph: *type = 4; break;
    }
    return VGPU_SUCCESS;
}

// The copy's nodes run what the original's do (a kernel's parameters are
// shared until either node's are set: set_kernel_params replaces `run`).
Status HostGraphs::clone(BackendGraph g, BackendGraph* out,
                         std::vector<std::pair<BackendGraphNode, BackendGraphNode>>* map) {
    const auto it = graphs_.find(g);
    if (it == graphs_.end()) return VGPU_ERROR_INVALID_HANDLE;
    Graph copy;
    std::map<BackendGraphNode, BackendGraphNode> to_copy;
    map->clear();
    for (const Node& n : it->second.nodes)
        if (n.kind == GraphNodeSpec::Kind::Conditional || n.kind == GraphNodeSpec::Kind::ChildGraph)
            return VGPU_ERROR_NOT_SUPPORTED; // bodies are never shared here
    for (const Node& n : it->second.nodes) {
        const BackendGraphNode id = next_id_++;
        copy.nodes.push_back(Node{id, n.kind, n.run, n.event, true});
        to_copy[n.id] = id;
        map->emplace_back(n.id, id);
    }
    for (const auto& [from, to] : it->second.edges) copy.edges.insert({to_copy.at(from), to_copy.at(to)});
    *out = next_id_++;
    graphs_[*out] = std::move(copy); // `it` stays valid: std::map
    return VGPU_SUCCESS;
}

bool HostGraphs::topological(const Graph& g, std::vector<size_t>* order) {
    std::map<BackendGraphNode, size_t> index;
    for (size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].id] = i;
    std::vector<size_t> waiting(g.nodes.size(), 0);
    std::vector<std::vector<size_t>> after(g.nodes.size());
    for (const auto& [from, to] : g.edges) {
        after[index.at(from)].push_back(index.at(to));
        ++waiting[index.at(to)];
    }
    std::set<size_t> ready; // smallest index first: the order added breaks ties
    for (size_t i = 0; i < waiting.size(); ++i)
        if (waiting[i] == 0) ready.insert(i);
    order->clear();
    while (!ready.empty()) {
        const size_t i = *ready.begin();
        ready.erase(ready.begin());
        order->push_back(i);
        for (size_t j : after[i])
            if (--waiting[j] == 0) ready.insert(j);
    }
    return order->size() == g.nodes.size();
}

HostGraphs::Exec HostGraphs::build(const Graph& g, const std::vector<size_t>& order) {
    Exec e;
    std::map<BackendGraphNode, size_t> place;
    for (size_t i = 0; i < order.size(); ++i) {
        e.order.push_back(g.nodes[order[i]]);
        e.at[g.nodes[order[i]].id] = i;
    }
    for (const auto& [from, to] : g.edges) e.edges.emplace_back(e.at.at(from), e.at.at(to));
    std::sort(e.edges.begin(), e.edges.end());
    return e;
}

Status HostGraphs::add_alloc_node(BackendGraph g, const GraphNodeSpec& asked, BackendGraphNode* out, uint64_t* dptr) {
    if (!graphs_.count(g)) return VGPU_ERROR_INVALID_HANDLE;
    if (const Status st = device_.mem_alloc(asked.bytes, dptr); st != VGPU_SUCCESS) return st;
    GraphNodeSpec spec;
    spec.kind = GraphNodeSpec::Kind::MemAlloc;
    spec.dependencies = asked.dependencies;
    const Status st = add_node(g, spec, out);
    if (st != VGPU_SUCCESS) device_.mem_free(*dptr);
    return st;
}

Status HostGraphs::alloc_in_capture(BackendStream s, uint64_t bytes, uint64_t* dptr) {
    if (!capturing(s)) return VGPU_ERROR_INVALID_VALUE;
    const uint64_t id = stream_capture_.at(s);
    auto& freed = captures_.at(id).freed;
    const auto again = std::find_if(freed.begin(), freed.end(), [bytes](const auto& f) { return f.second >= bytes; });
    const bool reused = again != freed.end();
    if (reused) {
        *dptr = again->first;
        freed.erase(again);
    } else if (const Status st = device_.mem_alloc(bytes, dptr); st != VGPU_SUCCESS) {
        return st;
    }
    if (const Status st = record(s, GraphNodeSpec::Kind::MemAlloc, [] { return VGPU_SUCCESS; }); st != VGPU_SUCCESS) {
        if (!reused) device_.mem_free(*dptr);
        return st;
    }
    if (!reused) captured_allocations_[*dptr] = CapturedAllocation{bytes, id};
    return VGPU_SUCCESS;
}

// The memory stays until no graph holds its allocation node.
Status HostGraphs::free_graph_allocation(BackendStream s, uint64_t dptr) {
    if (!capturing(s)) return VGPU_SUCCESS;
    const Status st = record(s, GraphNodeSpec::Kind::MemFree, [] { return VGPU_SUCCESS; });
    const uint64_t id = stream_capture_.at(s);
    const auto it = captured_allocations_.find(dptr);
    if (st == VGPU_SUCCESS && it != captured_allocations_.end() && it->second.capture == id) // the same graph's only
        captures_.at(id).freed.emplace_back(dptr, it->second.bytes);
    return st;
}

void HostGraphs::release_graph_allocation(uint64_t dptr) {
    captured_allocations_.erase(dptr);
    device_.mem_free(dptr);
}

Status HostGraphs::instantiate(BackendGraph g, uint64_t, BackendGraphExec* out) {
    const auto it = graphs_.find(g);
    if (it == graphs_.end()) return VGPU_ERROR_INVALID_HANDLE;
    std::vector<size_t> order;
    if (!topological(it->second, &order)) return VGPU_ERROR_INVALID_VALUE; // a cycle
    *out = next_id_++;
    execs_[*out] = build(it->second, order);
    return VGPU_SUCCESS;
}

Status HostGraphs::exec_destroy(BackendGraphExec e) { return execs_.erase(e) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE; }

Status HostGraphs::exec_update(BackendGraphExec e, BackendGraph g, uint32_t* result) {
    const auto ei = execs_.find(e);
    const auto gi = graphs_.find(g);
    if (ei == execs_.end() || gi == graphs_.end()) return VGPU_ERROR_INVALID_HANDLE;
    std::vector<size_t> order;
    *result = kUpdateTopologyChanged;
    if (!topological(gi->second, &order) || order.size() != ei->second.order.size())
        return VGPU_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    Exec fresh = build(gi->second, order);
    if (fresh.edges != ei->second.edges) return VGPU_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    for (size_t i = 0; i < order.size(); ++i)
        if (fresh.order[i].kind != ei->second.order[i].kind) {
            *result = kUpdateNodeTypeChanged;
            return VGPU_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
        }
    // Nodes switched off stay off: an update changes parameters, not that.
    for (size_t i = 0; i < order.size(); ++i) fresh.order[i].enabled = ei->second.order[i].enabled;
    ei->second = std::move(fresh);
    *result = 0;
    return VGPU_SUCCESS;
}

Status HostGraphs::launch(BackendGraphExec e, BackendStream s, bool upload_only) {
    const auto it = execs_.find(e);
    if (it == execs_.end()) return VGPU_ERROR_INVALID_HANDLE;
    if (capturing(s)) return VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED; // no child graphs here
    if (upload_only) return VGPU_SUCCESS;
    assign_defaults();
    for (const Node& n : it->second.order)
        if (const Status st = n.enabled ? n.run() : VGPU_SUCCESS; st != VGPU_SUCCESS) return st;
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
