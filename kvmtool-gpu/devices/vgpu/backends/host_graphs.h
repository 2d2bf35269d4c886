// CUDA graphs for the host backend: a graph records its nodes as calls of
// the backend's own operations (copies, memsets, the CPU reference
// kernels) and a launch replays them, synchronously, in a topological
// order (ties in the order the nodes were added). Stream capture records
// what the backend is asked to do on a capturing stream instead of doing
// it; a stream that waits on an event recorded in a capture joins it, as
// the driver's capture does. Synchronizing or querying a capturing stream
// is refused and invalidates the capture, as the driver does; unlike the
// driver, other streams' and the context's synchronization are not policed
// (CU_STREAM_CAPTURE_MODE_GLOBAL's rule), and a graph cannot be launched
// into a capture (no child graphs).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/graph_backend.h"

namespace kvmgpu::vgpu {

class HostGraphs final : public GraphBackend {
public:
    // `device` runs the nodes (its operations on the default stream).
    explicit HostGraphs(GpuBackend& device) : device_(device) {}

    // For the backend's stream operations: whether s is capturing; then
    // record() keeps `run` as the capture's next node instead of running it.
    // A synchronous call (`async` false) is refused instead and invalidates
    // the capture, as the driver does.
    bool capturing(BackendStream s) const { return s != 0 && stream_capture_.count(s); }
    Status record(BackendStream s, GraphNodeSpec::Kind kind, std::function<Status()> run, bool async = true);
    // A capturing stream's synchronize or query: refused, and the capture
    // is invalidated. VGPU_SUCCESS when s is not capturing.
    Status refuse_sync(BackendStream s);
    // Event e was recorded on s / stream s waits for e: joins s to e's capture.
    void event_recorded(BackendEvent e, BackendStream s);
    void stream_waits(BackendStream s, BackendEvent e);
    void forget_stream(BackendStream s);
    void clear(); // every graph, exec and capture (the backend dropped its objects)

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
    Status set_node_event(BackendGraphExec exec, BackendGraphNode node, bool wait, BackendEvent e) override;
    Status node_event(BackendGraphNode node, bool wait, BackendEvent* out) override;
    Status set_enabled(BackendGraphExec exec, BackendGraphNode node, bool enabled) override;
    Status enabled(BackendGraphExec exec, BackendGraphNode node, bool* out) override;
    // Graph memory: the backend's own allocations, made with the node (or
    // captured call) and freed when the device model releases them.
    Status add_alloc_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out, uint64_t* dptr) override;
    Status alloc_in_capture(BackendStream s, uint64_t bytes, uint64_t* dptr) override;
    Status free_graph_allocation(BackendStream s, uint64_t dptr) override;
    void release_graph_allocation(uint64_t dptr) override;
    // host_graph_conditionals.cpp. Host kernels never set a conditional:
    // it keeps its default, so IF and SWITCH nodes run the body it picks,
    // and WHILE nodes (which would never end) are not offered.
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
    struct Node {
        BackendGraphNode id;
        GraphNodeSpec::Kind kind;
        std::function<Status()> run;
        BackendEvent event = 0; // event nodes'
        bool enabled = true;    // an exec's copy may be switched off
    };
    struct Graph {
        std::vector<Node> nodes;                                    // in the order added
        std::set<std::pair<BackendGraphNode, BackendGraphNode>> edges; // (from, to)
    };
    struct Exec {
        std::vector<Node> order;                 // topological
        std::map<BackendGraphNode, size_t> at;   // the graph's node -> its place in order
        std::vector<std::pair<size_t, size_t>> edges; // by place, sorted (for updates)
    };
    struct Capture {
        BackendGraph graph;
        BackendStream origin;
        bool invalidated = false;
        bool into_existing = false; // a graph of the guest's (begin_capture_to_graph): it stays
        // Graph allocations freed in it (address, bytes): the next allocation
        // that fits takes the address again, as the driver's may.
        std::vector<std::pair<uint64_t, uint64_t>> freed;
    };
    struct Conditional {
        BackendGraph graph;
        uint32_t default_value, flags, value;
    };
    // A launch's start: CU_GRAPH_COND_ASSIGN_DEFAULT conditionals take their default.
    void assign_defaults();
    // Runs graph g's nodes now, in a topological order (a conditional's body).
    Status run_body(BackendGraph g);
    // The body graphs of a conditional node that is gone, and theirs.
    void drop_bodies(BackendGraphNode node);
    std::function<Status()> runner(const GraphNodeSpec& spec);
    // g's nodes in a topological order (indices into g.nodes); false on a cycle.
    static bool topological(const Graph& g, std::vector<size_t>* order);
    static Exec build(const Graph& g, const std::vector<size_t>& order);
    Node* node_of(BackendGraphNode id, Graph** graph = nullptr);
    // The graph's node (exec 0) or exec's copy of it; nullptr if neither.
    Node* node_in(BackendGraphExec exec, BackendGraphNode id);

    GpuBackend& device_;
    uint64_t next_id_ = 0x10000;
    std::map<BackendGraph, Graph> graphs_;
    std::map<BackendGraphExec, Exec> execs_;
    std::map<uint64_t, Capture> captures_;             // by capture id
    std::map<BackendStream, uint64_t> stream_capture_; // capturing streams (origin and joined)
    std::map<BackendEvent, uint64_t> event_capture_;   // events recorded in a capture
    std::map<uint64_t, Conditional> conditionals_;      // by handle
    std::map<BackendGraphNode, std::vector<BackendGraph>> bodies_; // a conditional node's (never shared: no clones)
    struct CapturedAllocation {
        uint64_t bytes, capture;
    };
    std::map<uint64_t, CapturedAllocation> captured_allocations_; // graph allocations made in captures, by address
};

} // namespace kvmgpu::vgpu
