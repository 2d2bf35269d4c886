// Handlers for event nodes (GRAPH_ADD_EVENT_NODE, GRAPH_EVENT_NODE_SET/GET_EVENT),
// nodes switched off in an exec (GRAPH_NODE_SET/GET_ENABLED) and an exec's
// flags. The driver's event node holds its CUevent without a reference, so
// an event a node was ever given outlives the guest's EVENT_DESTROY (retired,
// freed with its context): a later launch never records into freed memory.
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"

namespace kvmgpu::vgpu {

namespace {
// CUgraphNodeType
constexpr uint32_t kNodeKernel = 0, kNodeMemcpy = 1, kNodeMemset = 2, kNodeWaitEvent = 6, kNodeEventRecord = 7;
uint32_t event_node_type(uint64_t wait) { return wait ? kNodeWaitEvent : kNodeEventRecord; }
} // namespace

const CommandDispatch::GraphNodeEntry* CommandDispatch::node_of_type(uint64_t node, uint32_t type, Status* st,
                                                                     const char** why) {
    const GraphNodeEntry* n = graph_nodes_.find(node, ctx_);
    if (!n) {
        *st = VGPU_ERROR_INVALID_HANDLE, *why = "graph node handle";
        return nullptr;
    }
    uint32_t actual = 0;
    *st = backend_result(graph_backend()->node_type(n->node, &actual));
    *why = "";
    if (*st != VGPU_SUCCESS) return nullptr;
    if (actual != type) {
        *st = VGPU_ERROR_INVALID_VALUE, *why = "node not of the kind the command is for";
        return nullptr;
    }
    return n;
}

const char* CommandDispatch::exec_and_node(uint64_t exec, uint64_t node, const GraphExecEntry** x,
                                           const GraphNodeEntry** n, Status* st) {
    *st = VGPU_ERROR_INVALID_HANDLE;
    *x = graph_execs_.find(exec, ctx_);
    if (!*x) return "graph exec handle";
    *n = graph_nodes_.find(node, ctx_);
    if (!*n) return "graph node handle";
    *st = VGPU_ERROR_INVALID_VALUE;
    if ((*n)->graph != (*x)->graph) return "node not of the graph the exec was instantiated from";
    return nullptr;
}

bool CommandDispatch::retire_if_in_graph(BackendEvent e) {
    if (!graph_events_.erase(e)) return false;
    retired_events_.emplace_back(ctx_, e);
    return true;
}

void CommandDispatch::free_retired_events_of(uint64_t ctx) {
    std::erase_if(retired_events_, [&](const auto& r) {
        if (r.first != ctx) return false;
        backend().event_destroy(r.second);
        return true;
    });
}

// wait 1: a node waiting for the event, else one recording it.
CommandResult CommandDispatch::op_GRAPH_ADD_EVENT_NODE(GuestCommand& c) {
    const auto [graph, event, wait] = args_of<VGPU_OP_GRAPH_ADD_EVENT_NODE>(c);
    if (wait > 1) return fail(VGPU_ERROR_INVALID_VALUE, "event node kind");
    const BackendEvent* e = events_.find(event, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "event handle");
    GraphNodeSpec spec;
    spec.kind = wait ? GraphNodeSpec::Kind::EventWait : GraphNodeSpec::Kind::EventRecord;
    spec.event = *e;
    const BackendEvent kept = *e;
    CommandResult r = add_graph_node(graph, spec);
    if (r.status == VGPU_SUCCESS) graph_events_.insert(kept);
    return r;
}

// exec 0: the graph's node; else the copy in an exec of the node's graph.
CommandResult CommandDispatch::op_GRAPH_EVENT_NODE_SET_EVENT(GuestCommand& c) {
    const auto [exec, node, event, wait] = args_of<VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT>(c);
    if (wait > 1) return fail(VGPU_ERROR_INVALID_VALUE, "event node kind");
    Status st = VGPU_SUCCESS;
    const char* why = nullptr;
    const GraphNodeEntry* n = node_of_type(node, event_node_type(wait), &st, &why);
    if (!n) return *why ? fail(st, why) : done(st);
    const GraphExecEntry* x = nullptr;
    if (exec != 0) {
        x = graph_execs_.find(exec, ctx_);
        if (!x) return fail(VGPU_ERROR_INVALID_HANDLE, "graph exec handle");
        if (x->graph != n->graph) return fail(VGPU_ERROR_INVALID_VALUE, "node not of the graph the exec was instantiated from");
    }
    const BackendEvent* e = events_.find(event, ctx_);
    if (!e) return fail(VGPU_ERROR_INVALID_HANDLE, "event handle");
    graph_events_.insert(*e); // named from now on, whatever the backend answers
    return done(backend_result(graph_backend()->set_node_event(x ? x->exec : 0, n->node, wait == 1, *e)));
}

// node, wait -> the handle of the event the graph's node names.
CommandResult CommandDispatch::op_GRAPH_EVENT_NODE_GET_EVENT(GuestCommand& c) {
    const auto [node, wait] = args_of<VGPU_OP_GRAPH_EVENT_NODE_GET_EVENT>(c);
    if (wait > 1) return fail(VGPU_ERROR_INVALID_VALUE, "event node kind");
    Status st = VGPU_SUCCESS;
    const char* why = nullptr;
    const GraphNodeEntry* n = node_of_type(node, event_node_type(wait), &st, &why);
    if (!n) return *why ? fail(st, why) : done(st);
    BackendEvent e = 0;
    st = backend_result(graph_backend()->node_event(n->node, wait == 1, &e));
    if (st != VGPU_SUCCESS) return done(st);
    uint64_t handle = 0;
    events_.for_each([&](uint64_t h, BackendEvent v) {
        if (v == e && events_.find(h, ctx_)) handle = h;
    });
    if (handle == 0) return fail(VGPU_ERROR_INVALID_HANDLE, "the node's event was destroyed");
    return done(VGPU_SUCCESS, handle);
}

// Kernel, memcpy and memset nodes only, as the driver allows.
CommandResult CommandDispatch::op_GRAPH_NODE_SET_ENABLED(GuestCommand& c) {
    const auto [exec, node, enabled] = args_of<VGPU_OP_GRAPH_NODE_SET_ENABLED>(c);
    if (enabled > 1) return fail(VGPU_ERROR_INVALID_VALUE, "enabled is 0 or 1");
    const GraphExecEntry* x = nullptr;
    const GraphNodeEntry* n = nullptr;
    Status st = VGPU_SUCCESS;
    if (const char* why = exec_and_node(exec, node, &x, &n, &st)) return fail(st, why);
    uint32_t type = 0;
    st = backend_result(graph_backend()->node_type(n->node, &type));
    if (st != VGPU_SUCCESS) return done(st);
    if (type != kNodeKernel && type != kNodeMemcpy && type != kNodeMemset)
        return fail(VGPU_ERROR_INVALID_VALUE, "only kernel, memcpy and memset nodes are switched off");
    return done(backend_result(graph_backend()->set_enabled(x->exec, n->node, enabled == 1)));
}

CommandResult CommandDispatch::op_GRAPH_NODE_GET_ENABLED(GuestCommand& c) {
    const auto [exec, node] = args_of<VGPU_OP_GRAPH_NODE_GET_ENABLED>(c);
    const GraphExecEntry* x = nullptr;
    const GraphNodeEntry* n = nullptr;
    Status st = VGPU_SUCCESS;
    if (const char* why = exec_and_node(exec, node, &x, &n, &st)) return fail(st, why);
    bool on = false;
    st = backend_result(graph_backend()->enabled(x->exec, n->node, &on));
    return done(st, on ? 1 : 0);
}

CommandResult CommandDispatch::op_GRAPH_EXEC_GET_FLAGS(GuestCommand& c) {
    const GraphExecEntry* x = graph_execs_.find(args_of<VGPU_OP_GRAPH_EXEC_GET_FLAGS>(c).handle, ctx_);
    if (!x) return fail(VGPU_ERROR_INVALID_HANDLE, "graph exec handle");
    return done(VGPU_SUCCESS, x->flags);
}

} // namespace kvmgpu::vgpu
