// Handlers for CUDA graphs and stream capture (vgpu_abi.h, "graphs"):
// graphs, graph execs and nodes are VM handles owned by their context;
// nodes are checked as the commands they stand for are; the nodes a VM
// holds are bounded by max_graph_nodes.
#include <cstring>
#include <utility>

#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint32_t kKernelPayloadRoom = sizeof(vgpu_graph_kernel_payload::params);
} // namespace

GraphBackend* CommandDispatch::graph_backend() { return backend().graphs(); }

bool CommandDispatch::capture_quota_exceeded() {
    if (open_captures_ == 0) return false;
    // Counted while any capture is open, whatever the stream: the capture
    // may have been joined by any of them. Cheap, and bounds what a capture
    // can make the driver hold before END_CAPTURE counts it.
    if (++captured_ops_ + graph_node_count_ <= opts_.max_graph_nodes) return false;
    // Past the bound: is a capture really still open? (One that failed or
    // whose stream went would otherwise keep counting.)
    uint32_t open = 0;
    streams_.for_each([&](uint64_t, BackendStream s) {
        uint32_t status = kCaptureNone;
        uint64_t id = 0;
        if (graph_backend()->capture_status(s, &status, &id) == VGPU_SUCCESS && status != kCaptureNone) ++open;
    });
    open_captures_ = open;
    if (open == 0) captured_ops_ = 0;
    return open != 0;
}

std::optional<uint64_t> CommandDispatch::node_handle(uint64_t graph, GraphEntry& g, BackendGraphNode n) {
    if (auto it = g.handles.find(n); it != g.handles.end()) return it->second;
    auto h = graph_nodes_.insert(GraphNodeEntry{graph, n}, ctx_);
    if (h) g.handles.emplace(n, *h);
    return h;
}

void CommandDispatch::forget_graph(const GraphEntry& g) {
    for (const auto& [node, handle] : g.handles) graph_nodes_.erase(handle, ctx_); // the graph's owner is current
    graph_node_count_ -= std::min(graph_node_count_, g.nodes);
}

// A stream the guest created, a CUstreamCaptureMode.
CommandResult CommandDispatch::op_STREAM_BEGIN_CAPTURE(GuestCommand& c) {
    GraphBackend* gb = graph_backend();
    if (!gb) return fail(VGPU_ERROR_NOT_SUPPORTED, "this backend has no CUDA graphs");
    const auto [stream, mode] = args_of<VGPU_OP_STREAM_BEGIN_CAPTURE>(c);
    BackendStream s;
    if (stream == 0) return fail(VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED, "the default stream cannot capture");
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (mode >= kCaptureModes) return fail(VGPU_ERROR_INVALID_VALUE, "capture mode");
    return done(capture_began(s, backend_result(gb->begin_capture(s, static_cast<uint32_t>(mode)))));
}

Status CommandDispatch::capture_began(BackendStream s, Status began) {
    if (began != VGPU_SUCCESS) return began;
    if (open_captures_++ == 0) captured_ops_ = 0;
    uint32_t status = kCaptureNone;
    uint64_t id = 0;
    if (graph_backend()->capture_status(s, &status, &id) == VGPU_SUCCESS && status == kCaptureActive)
        capture_of_stream_[s] = id;
    return began;
}

// The stream -> result0 the captured graph.
CommandResult CommandDispatch::op_STREAM_END_CAPTURE(GuestCommand& c) {
    GraphBackend* gb = graph_backend();
    if (!gb) return fail(VGPU_ERROR_NOT_SUPPORTED, "this backend has no CUDA graphs");
    const uint64_t stream = args_of<VGPU_OP_STREAM_END_CAPTURE>(c).handle;
    BackendStream s;
    if (stream == 0 || !stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (graphs_.size() >= graphs_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph table full");
    uint32_t status = kCaptureNone;
    uint64_t capture = 0;
    if (gb->capture_status(s, &status, &capture) != VGPU_SUCCESS || status != kCaptureActive) {
        const auto seen = capture_of_stream_.find(s);
        capture = seen == capture_of_stream_.end() ? 0 : seen->second;
    }
    capture_of_stream_.erase(s);
    BackendGraph g = 0;
    const Status st = backend_result(gb->end_capture(s, &g));
    uint32_t still = kCaptureNone;
    uint64_t id = 0;
    const bool ended = gb->capture_status(s, &still, &id) != VGPU_SUCCESS || still == kCaptureNone;
    if (open_captures_ > 0 && ended) --open_captures_;
    std::vector<GuestRamUse> guest_ram;
    if (auto it = capture_ram_.find(capture); it != capture_ram_.end() && ended) {
        guest_ram = std::move(it->second);
        capture_ram_.erase(it);
    }
    if (st != VGPU_SUCCESS) {
        if (ended) {
            end_capture_allocations(capture, nullptr);
            settle_capture_graph(s, false);
        }
        return done(st);
    }
    // A graph the guest already names: the capture's own, named while it
    // ran, or the guest's that it captured into.
    const uint64_t made = settle_capture_graph(s, true);
    const std::optional<uint64_t> named = made ? std::optional<uint64_t>{made} : handle_of_graph(g);
    GraphEntry* known = named ? graphs_.find(*named, ctx_) : nullptr;
    const uint64_t counted = known ? known->nodes : 0;
    std::vector<BackendGraphNode> nodes;
    if (gb->nodes(g, &nodes) != VGPU_SUCCESS || graph_node_count_ - counted + nodes.size() > opts_.max_graph_nodes) {
        end_capture_allocations(capture, nullptr);
        if (known) { // destroyed below with its entry, as GRAPH_DESTROY would
            auto e = graphs_.erase(*named, ctx_);
            forget_graph(*e);
            forget_bodies(*named, 0);
        }
        gb->graph_destroy(g);
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "captured graph past max_graph_nodes");
    }
    graph_node_count_ += nodes.size() - counted;
    if (known) {
        known->nodes = nodes.size();
        known->guest_ram.insert(known->guest_ram.end(), guest_ram.begin(), guest_ram.end());
        end_capture_allocations(capture, known);
        return done(VGPU_SUCCESS, *named);
    }
    GraphEntry entry{g, nodes.size(), {}, 0, {}, {}, std::move(guest_ram)};
    end_capture_allocations(capture, &entry);
    return done(VGPU_SUCCESS, *graphs_.insert(std::move(entry), ctx_));
}

// The stream -> result0 CUstreamCaptureStatus, result1 the capture's id.
CommandResult CommandDispatch::op_STREAM_CAPTURE_INFO(GuestCommand& c) {
    GraphBackend* gb = graph_backend();
    BackendStream s;
    if (!stream_of(args_of<VGPU_OP_STREAM_CAPTURE_INFO>(c).handle, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    if (!gb) return done(VGPU_SUCCESS, kCaptureNone, 0); // nothing captures here
    uint32_t status = kCaptureNone;
    uint64_t id = 0;
    const Status st = backend_result(gb->capture_status(s, &status, &id));
    return done(st, status, id);
}

CommandResult CommandDispatch::op_GRAPH_CREATE(GuestCommand& c) {
    GraphBackend* gb = graph_backend();
    if (!gb) return fail(VGPU_ERROR_NOT_SUPPORTED, "this backend has no CUDA graphs");
    if (args_of<VGPU_OP_GRAPH_CREATE>(c).flags != 0) return fail(VGPU_ERROR_INVALID_VALUE, "graph flags");
    if (graphs_.size() >= graphs_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph table full");
    BackendGraph g = 0;
    const Status st = backend_result(gb->graph_create(&g));
    if (st != VGPU_SUCCESS) return done(st);
    return done(VGPU_SUCCESS, *graphs_.insert(GraphEntry{g, 0, {}, 0, {}, {}}, ctx_));
}

CommandResult CommandDispatch::op_GRAPH_DESTROY(GuestCommand& c) {
    const uint64_t handle = args_of<VGPU_OP_GRAPH_DESTROY>(c).handle;
    const GraphEntry* live = graphs_.find(handle, ctx_);
    if (!live) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    if (live->body_of) return fail(VGPU_ERROR_INVALID_VALUE, "a conditional node's body graph goes with its node");
    if (live->capture_stream) return fail(VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED, "the graph of a capture still running");
    auto g = graphs_.erase(handle, ctx_);
    forget_graph(*g);
    forget_bodies(handle, 0);
    const Status st = backend_result(graph_backend()->graph_destroy(g->graph));
    drop_graph_allocations(g->allocations);
    return done(st);
}

// count handles, appended to those given before or in their place.
CommandResult CommandDispatch::op_GRAPH_NEXT_NODE_DEPENDENCIES(GuestCommand& c) {
    const auto [graph, count, append] = args_of<VGPU_OP_GRAPH_NEXT_NODE_DEPENDENCIES>(c);
    NextNodeDependencies& next = next_node_deps_;
    if (!append || next.graph != graph) next.handles.clear();
    next.graph = graph;
    if (!graphs_.find(graph, ctx_)) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    if (count > VGPU_GRAPH_NODES_PER_CALL || count * 8 > c.desc.payload_len || append > 1 ||
        next.handles.size() + count > opts_.max_graph_nodes) {
        next.handles.clear();
        return fail(VGPU_ERROR_INVALID_VALUE, "dependency count or flag");
    }
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t h;
        std::memcpy(&h, c.payload.data() + i * 8, 8);
        next.handles.push_back(h);
    }
    return done(VGPU_SUCCESS);
}

CommandResult CommandDispatch::add_graph_node(uint64_t graph, const GraphNodeSpec& asked) {
    // The node takes the dependencies given for it, checked now: a node
    // they named may have gone since.
    NextNodeDependencies next = std::exchange(next_node_deps_, {});
    GraphEntry* g = graphs_.find(graph, ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    if (graph_node_count_ >= opts_.max_graph_nodes) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph nodes past max_graph_nodes");
    if (graph_nodes_.size() >= graph_nodes_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph node table full");
    std::vector<BackendGraphNode> deps;
    if (next.graph == graph && !next.handles.empty())
        if (const char* why = nodes_of_graph(graph, reinterpret_cast<const uint8_t*>(next.handles.data()),
                                             next.handles.size(), &deps))
            return fail(VGPU_ERROR_INVALID_VALUE, why);
    GraphNodeSpec spec = asked;
    spec.dependencies = deps;
    BackendGraphNode n = 0;
    uint64_t dptr = 0;
    const bool alloc = spec.kind == GraphNodeSpec::Kind::MemAlloc;
    const Status st = backend_result(alloc ? graph_backend()->add_alloc_node(g->graph, spec, &n, &dptr)
                                           : graph_backend()->add_node(g->graph, spec, &n));
    if (st != VGPU_SUCCESS) return done(st);
    ++g->nodes;
    ++graph_node_count_;
    const uint64_t handle = *node_handle(graph, *g, n); // room checked above
    if (!alloc) return done(VGPU_SUCCESS, handle);
    if (!add_graph_allocation(dptr, spec.bytes)) return fail(VGPU_ERROR_UNKNOWN, "backend returned an overlapping allocation");
    g->allocations.push_back(dptr);
    return done(VGPU_SUCCESS, handle, dptr);
}

CommandResult CommandDispatch::op_GRAPH_ADD_EMPTY_NODE(GuestCommand& c) {
    return add_graph_node(args_of<VGPU_OP_GRAPH_ADD_EMPTY_NODE>(c).handle, GraphNodeSpec{});
}

CommandDispatch::KernelNode CommandDispatch::kernel_node(const GuestCommand& c) {
    KernelNode k;
    const LaunchShape l = launch_shape(c, /*with_stream=*/false);
    if (l.why) {
        k.status = l.status, k.why = l.why;
        return k;
    }
    k.target = args_of<VGPU_OP_GRAPH_ADD_KERNEL_NODE, VGPU_OP_GRAPH_KERNEL_NODE_SET_PARAMS,
                       VGPU_OP_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS>(c)
                   .stream; // the graph, or the node
    if (c.desc.payload_len < 8) {
        k.status = VGPU_ERROR_INVALID_VALUE, k.why = "kernel node payload without its exec field";
        return k;
    }
    std::memcpy(&k.exec, c.payload.data(), sizeof k.exec);
    const ParamLayout& layout = l.function->params;
    if (l.params != layout.total_bytes()) {
        k.status = VGPU_ERROR_INVALID_VALUE, k.why = "parameter buffer not the kernel's size";
        return k;
    }
    const uint32_t len = c.desc.payload_len > 8 ? c.desc.payload_len - 8 : 0;
    if (const char* why = take_param_buffer(c.payload.data() + 8, len, kKernelPayloadRoom, l.params)) {
        k.status = VGPU_ERROR_INVALID_VALUE, k.why = why;
        return k;
    }
    k.spec.kind = GraphNodeSpec::Kind::Kernel;
    k.spec.function = l.function->function;
    k.spec.grid = l.grid, k.spec.block = l.block, k.spec.shared_bytes = l.shared;
    k.spec.params = {param_buffer_.data(), l.params};
    k.spec.layout = &layout;
    return k;
}

CommandResult CommandDispatch::op_GRAPH_ADD_KERNEL_NODE(GuestCommand& c) {
    const KernelNode k = kernel_node(c);
    if (k.why) return fail(k.status, k.why);
    if (k.exec != 0) return fail(VGPU_ERROR_INVALID_VALUE, "exec field set on a graph's node");
    return add_graph_node(k.target, k.spec);
}

// KERNEL_NODE_SET_PARAMS and EXEC_KERNEL_NODE_SET_PARAMS.
CommandResult CommandDispatch::set_kernel_node_params(GuestCommand& c) {
    const KernelNode k = kernel_node(c);
    if (k.why) return fail(k.status, k.why);
    const bool in_exec = c.desc.opcode == VGPU_OP_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS;
    const GraphExecEntry* exec = in_exec ? graph_execs_.find(k.exec, ctx_) : nullptr;
    if (in_exec ? !exec : k.exec != 0) return fail(VGPU_ERROR_INVALID_HANDLE, "graph exec handle");
    const GraphNodeEntry* node = graph_nodes_.find(k.target, ctx_);
    if (!node) return fail(VGPU_ERROR_INVALID_HANDLE, "graph node handle");
    return done(backend_result(graph_backend()->set_kernel_params(exec ? exec->exec : 0, node->node, k.spec)));
}

// direction: a MEMCPY opcode (HTOD, DTOH, DTOD).
CommandResult CommandDispatch::op_GRAPH_ADD_MEMCPY_NODE(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_GRAPH_ADD_MEMCPY_NODE>(c);
    GraphNodeSpec spec;
    spec.kind = GraphNodeSpec::Kind::Memcpy;
    spec.dst = a.dst, spec.src = a.src, spec.bytes = a.bytes;
    const uint64_t dir = a.direction;
    if (dir != VGPU_OP_MEMCPY_HTOD && dir != VGPU_OP_MEMCPY_DTOH && dir != VGPU_OP_MEMCPY_DTOD)
        return fail(VGPU_ERROR_INVALID_VALUE, "memcpy node direction");
    spec.direction = static_cast<uint16_t>(dir);
    if (spec.bytes == 0) return fail(VGPU_ERROR_INVALID_VALUE, "empty memcpy node");
    const uint64_t device_dst = dir == VGPU_OP_MEMCPY_DTOH ? 0 : spec.dst, device_src = dir == VGPU_OP_MEMCPY_HTOD ? 0 : spec.src;
    if (device_dst && !allocs_.contains(device_dst, spec.bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "dst device range not this VM's");
    if (device_src && !allocs_.contains(device_src, spec.bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "src device range not this VM's");
    const uint64_t guest = dir == VGPU_OP_MEMCPY_HTOD ? spec.src : spec.dst;
    if (dir != VGPU_OP_MEMCPY_DTOD) {
        // Registered now, and guest RAM stays registered while the VM lives:
        // the node may be launched at any later time. A remote copy of guest
        // RAM is filled or sent back at each launch instead.
        spec.host = guest_view(guest, spec.bytes);
        if (!spec.host) return fail(VGPU_ERROR_INVALID_VALUE, "guest range outside RAM");
        if (const Status s = backend_result(devices_.prepare_guest_ram_in_one(spec.host, spec.bytes)); s != VGPU_SUCCESS)
            return done(s);
    }
    CommandResult r = add_graph_node(a.graph, spec);
    if (r.status == VGPU_SUCCESS && dir != VGPU_OP_MEMCPY_DTOD && ram_is_remote()) {
        GraphEntry* g = graphs_.find(a.graph, ctx_);
        const GraphNodeEntry* n = graph_nodes_.find(r.result[0], ctx_);
        if (g && n) g->guest_ram.push_back(GuestRamUse{guest, spec.bytes, dir == VGPU_OP_MEMCPY_DTOH, n->node});
    }
    return r;
}

CommandResult CommandDispatch::op_GRAPH_ADD_MEMSET_NODE(GuestCommand& c) {
    const auto a = args_of<VGPU_OP_GRAPH_ADD_MEMSET_NODE>(c);
    GraphNodeSpec spec;
    spec.kind = GraphNodeSpec::Kind::Memset;
    spec.dst = a.dptr, spec.count = a.count;
    const uint64_t value = a.value, element = a.element_bytes;
    if (element != 1 && element != 2 && element != 4) return fail(VGPU_ERROR_INVALID_VALUE, "memset element size");
    if (value >> (8 * element)) return fail(VGPU_ERROR_INVALID_VALUE, "memset value too wide");
    if (spec.dst % element) return fail(VGPU_ERROR_INVALID_VALUE, "memset dptr not aligned to its element");
    uint64_t bytes;
    if (spec.count == 0 || __builtin_mul_overflow(spec.count, element, &bytes))
        return fail(VGPU_ERROR_INVALID_VALUE, "memset count empty or wraps");
    if (!allocs_.contains(spec.dst, bytes)) return fail(VGPU_ERROR_INVALID_VALUE, "device range not this VM's");
    spec.value = static_cast<uint32_t>(value), spec.element_bytes = static_cast<uint32_t>(element);
    return add_graph_node(a.graph, spec);
}

// remove 1 to remove (else add); payload = {from, to} pairs.
CommandResult CommandDispatch::op_GRAPH_DEPENDENCIES(GuestCommand& c) {
    const auto [graph, pairs, remove] = args_of<VGPU_OP_GRAPH_DEPENDENCIES>(c);
    const GraphEntry* g = graphs_.find(graph, ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    if (pairs == 0 || pairs > VGPU_GRAPH_EDGES_PER_CALL || pairs * 16 > c.desc.payload_len || remove > 1)
        return fail(VGPU_ERROR_INVALID_VALUE, "edge count or flag");
    for (uint64_t i = 0; i < pairs; ++i) {
        uint64_t ends[2];
        std::memcpy(ends, c.payload.data() + i * 16, sizeof ends);
        const GraphNodeEntry* from = graph_nodes_.find(ends[0], ctx_);
        const GraphNodeEntry* to = graph_nodes_.find(ends[1], ctx_);
        if (!from || !to || from->graph != graph || to->graph != graph)
            return fail(VGPU_ERROR_INVALID_VALUE, "edge node not this graph's");
        if (from == to) return fail(VGPU_ERROR_INVALID_VALUE, "edge from a node to itself");
        const Status st = backend_result(graph_backend()->dependency(g->graph, from->node, to->node, remove == 1));
        if (st != VGPU_SUCCESS) return done(st);
    }
    return done(VGPU_SUCCESS);
}

// -> result0 count; payload <- handles from first on.
CommandResult CommandDispatch::op_GRAPH_GET_NODES(GuestCommand& c) {
    const auto [graph, first] = args_of<VGPU_OP_GRAPH_GET_NODES>(c);
    GraphEntry* g = graphs_.find(graph, ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    std::vector<BackendGraphNode> nodes;
    const Status st = backend_result(graph_backend()->nodes(g->graph, &nodes));
    if (st != VGPU_SUCCESS) return done(st);
    if (first > nodes.size()) return fail(VGPU_ERROR_INVALID_VALUE, "first node past the last");
    const uint64_t n = std::min<uint64_t>(nodes.size() - first, VGPU_GRAPH_NODES_PER_CALL);
    c.payload.fill(0);
    for (uint64_t i = 0; i < n; ++i) {
        const auto h = node_handle(graph, *g, nodes[first + i]);
        if (!h) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph node table full");
        std::memcpy(c.payload.data() + i * 8, &*h, 8);
    }
    CommandResult r = done(VGPU_SUCCESS, nodes.size());
    r.write_payload = true;
    return r;
}

CommandResult CommandDispatch::op_GRAPH_DESTROY_NODE(GuestCommand& c) {
    const uint64_t handle = args_of<VGPU_OP_GRAPH_DESTROY_NODE>(c).handle;
    const GraphNodeEntry* node = graph_nodes_.find(handle, ctx_);
    if (!node) return fail(VGPU_ERROR_INVALID_HANDLE, "graph node handle");
    const uint64_t graph = node->graph;
    GraphEntry* g = graphs_.find(graph, ctx_);
    const BackendGraphNode n = node->node;
    const Status st = backend_result(graph_backend()->destroy_node(n));
    if (st != VGPU_SUCCESS) return done(st);
    graph_nodes_.erase(handle, ctx_);
    forget_bodies(graph, n); // a conditional node's bodies went with it
    g = graphs_.find(graph, ctx_);
    if (g) {
        g->handles.erase(n);
        std::erase_if(g->copies, [n](const auto& e) { return e.second == n; }); // never found again
        std::erase_if(g->guest_ram, [n](const GuestRamUse& u) { return u.node == n; });
        if (g->nodes) --g->nodes, --graph_node_count_;
    }
    return done(VGPU_SUCCESS);
}

// A graph, flags -> result0 graph exec. Flags, cuda.h's
// CUgraphInstantiate_flags, go to the backend: AUTO_FREE_ON_LAUNCH (1;
// PyTorch instantiates every captured graph with it) frees the graph's
// allocations still live before a relaunch; USE_NODE_PRIORITY (8) is a
// scheduling hint. UPLOAD (2) and DEVICE_LAUNCH (4) are not offered.
CommandResult CommandDispatch::op_GRAPH_INSTANTIATE(GuestCommand& c) {
    const auto [graph, flags] = args_of<VGPU_OP_GRAPH_INSTANTIATE>(c);
    const GraphEntry* g = graphs_.find(graph, ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    constexpr uint64_t kAutoFreeOnLaunch = 1, kUseNodePriority = 8;
    if (flags & ~(kAutoFreeOnLaunch | kUseNodePriority))
        return fail(VGPU_ERROR_INVALID_VALUE, "instantiate flags (upload and device launch not offered)");
    if (graph_execs_.size() >= graph_execs_.capacity()) return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph exec table full");
    const uint64_t nodes = nodes_with_bodies(graph); // the exec copies its conditionals' bodies too
    if (graph_node_count_ + nodes > opts_.max_graph_nodes)
        return fail(VGPU_ERROR_OUT_OF_MEMORY, "graph exec nodes past max_graph_nodes");
    BackendGraphExec e = 0;
    const Status st = backend_result(graph_backend()->instantiate(g->graph, flags, &e));
    if (st != VGPU_SUCCESS) return done(st);
    graph_node_count_ += nodes;
    hold_graph_allocations(g->allocations);
    return done(VGPU_SUCCESS,
                *graph_execs_.insert(GraphExecEntry{e, nodes, graph, flags, g->allocations, g->guest_ram}, ctx_));
}

CommandResult CommandDispatch::op_GRAPH_EXEC_DESTROY(GuestCommand& c) {
    auto e = graph_execs_.erase(args_of<VGPU_OP_GRAPH_EXEC_DESTROY>(c).handle, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "graph exec handle");
    graph_node_count_ -= std::min(graph_node_count_, e->nodes);
    const Status st = backend_result(graph_backend()->exec_destroy(e->exec));
    drop_graph_allocations(e->allocations);
    return done(st);
}

// GRAPH_LAUNCH and GRAPH_UPLOAD: a graph exec on a stream.
CommandResult CommandDispatch::launch_graph(GuestCommand& c) {
    const auto [exec, stream] = args_of<VGPU_OP_GRAPH_LAUNCH, VGPU_OP_GRAPH_UPLOAD>(c);
    const GraphExecEntry* e = graph_execs_.find(exec, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "graph exec handle");
    BackendStream s;
    if (!stream_of(stream, &s)) return fail(VGPU_ERROR_INVALID_HANDLE, "stream handle");
    const bool upload = c.desc.opcode == VGPU_OP_GRAPH_UPLOAD;
    if (!upload && !fetch_graph_reads(e->guest_ram)) return fail(VGPU_ERROR_UNKNOWN, "guest RAM out of reach (remote VMM)");
    Status st = backend_result(graph_backend()->launch(e->exec, s, upload));
    if (st == VGPU_SUCCESS && !is_async(c)) st = backend_result(backend().stream_synchronize(s));
    if (st == VGPU_SUCCESS && !upload) mark_graph_writes(e->guest_ram); // sent back once the device has drained
    return done(st);
}

// A graph exec, a graph -> result0 CUgraphExecUpdateResult.
CommandResult CommandDispatch::op_GRAPH_EXEC_UPDATE(GuestCommand& c) {
    const auto [exec, graph] = args_of<VGPU_OP_GRAPH_EXEC_UPDATE>(c);
    GraphExecEntry* e = graph_execs_.find(exec, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "graph exec handle");
    const GraphEntry* g = graphs_.find(graph, ctx_);
    if (!g) return fail(VGPU_ERROR_INVALID_HANDLE, "graph handle");
    uint32_t result = 0;
    const Status st = backend_result(graph_backend()->exec_update(e->exec, g->graph, &result));
    if (st == VGPU_SUCCESS) e->guest_ram = g->guest_ram;
    // A refused update is an answer: the result says why, as cuGraphExecUpdate's does.
    CommandResult r;
    r.status = st;
    r.result[0] = result;
    if (st != VGPU_SUCCESS && st != VGPU_ERROR_GRAPH_EXEC_UPDATE_FAILURE) return fail(st, "backend refused");
    return r;
}

void CommandDispatch::end_captures_of(uint64_t ctx) {
    GraphBackend* gb = graph_backend();
    if (!gb || open_captures_ == 0) return;
    streams_.for_each([&](uint64_t h, BackendStream s) {
        uint32_t status = kCaptureNone;
        uint64_t id = 0;
        if (!streams_.find(h, ctx) || gb->capture_status(s, &status, &id) != VGPU_SUCCESS || status == kCaptureNone)
            return;
        BackendGraph g = 0;
        // A joined stream's end is refused. A graph the guest captured into
        // stays its own (destroyed with the context's graphs).
        const bool ended = gb->end_capture(s, &g) == VGPU_SUCCESS && g;
        const uint64_t made = settle_capture_graph(s, true);
        if (made) {
            if (auto e = graphs_.erase(made, ctx_)) forget_graph(*e), forget_bodies(made, 0);
        }
        if (ended && (made || !handle_of_graph(g))) gb->graph_destroy(g);
        if (gb->capture_status(s, &status, &id) == VGPU_SUCCESS && status == kCaptureNone && open_captures_ > 0)
            --open_captures_;
    });
}

void CommandDispatch::destroy_graphs_of(uint64_t ctx) {
    GraphBackend* gb = graph_backend();
    graph_execs_.erase_owned_by(ctx, [&](const GraphExecEntry& e) {
        if (gb) gb->exec_destroy(e.exec);
        graph_node_count_ -= std::min(graph_node_count_, e.nodes);
        drop_graph_allocations(e.allocations);
    });
    graph_nodes_.erase_owned_by(ctx, [](const GraphNodeEntry&) {});
    graphs_.erase_owned_by(ctx, [&](const GraphEntry& g) {
        if (gb && !g.body_of && !g.capture_stream) gb->graph_destroy(g.graph); // bodies and captures' go with theirs
        graph_node_count_ -= std::min(graph_node_count_, g.nodes);
        drop_graph_allocations(g.allocations);
    });
    // Allocations of captures that never ended (their streams went first).
    for (auto it = capture_allocations_.begin(); it != capture_allocations_.end();) {
        std::vector<uint64_t> mine;
        std::erase_if(it->second, [&](uint64_t d) {
            const auto a = graph_allocations_.find(d);
            if (a == graph_allocations_.end() || a->second.ctx != ctx) return false;
            mine.push_back(d);
            return true;
        });
        drop_graph_allocations(mine);
        it = it->second.empty() ? capture_allocations_.erase(it) : std::next(it);
    }
}

CommandResult CommandDispatch::op_GRAPH_KERNEL_NODE_SET_PARAMS(GuestCommand& c) { return set_kernel_node_params(c); }
CommandResult CommandDispatch::op_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS(GuestCommand& c) { return set_kernel_node_params(c); }

CommandResult CommandDispatch::op_GRAPH_LAUNCH(GuestCommand& c) { return launch_graph(c); }
CommandResult CommandDispatch::op_GRAPH_UPLOAD(GuestCommand& c) { return launch_graph(c); }

} // namespace kvmgpu::vgpu
