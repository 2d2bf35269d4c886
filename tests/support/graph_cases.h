// CUDA graphs and stream capture through the ring, written once and run on
// every backend that has them: the host backend (unit), the CUDA backend
// (gpu). A VM with vector_add(a, b, c, n) and three 4 KiB buffers.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {

inline constexpr uint64_t kGraphIn = kDataGpa, kGraphOut = kDataGpa + 0x10000;

struct GraphVm {
    VgpuRig& rig;
    uint64_t add = 0, a = 0, b = 0, c = 0;
    // Loads vector_add from `image` (default: the host backend's dummy) and allocates a, b, c.
    explicit GraphVm(VgpuRig& r, std::span<const uint8_t> image = {});
    // The command's result0; a failed expectation when it did not succeed.
    uint64_t ok(const Cmd& cmd);
    uint64_t graph();
    Done memcpy_node(uint64_t g, uint64_t dir, uint64_t dst, uint64_t src, uint64_t n);
    Done memset_node(uint64_t g, uint64_t dptr, uint64_t value, uint64_t element, uint64_t count);
    // vector_add(x, y, out, n) as a kernel-node command on `target`.
    Cmd kernel_cmd(uint16_t op, uint64_t target, uint64_t x, uint64_t y, uint64_t out, uint32_t n, uint64_t exec = 0,
                   uint32_t bytes = 28);
    Done edge(uint64_t g, uint64_t from, uint64_t to, uint64_t remove = 0);
    // GRAPH_NEXT_NODE_DEPENDENCIES: the next node added to g depends on `nodes`.
    Done next_depends_on(uint64_t g, const std::vector<uint64_t>& nodes, uint64_t append = 0);
    // GRAPH_EDGES' pairs about `handle` (VGPU_GRAPH_EDGES_*), all of them, sorted.
    std::vector<std::pair<uint64_t, uint64_t>> pairs(uint64_t handle, uint64_t kind);
    uint64_t node_type(uint64_t node);
    std::vector<float> floats(uint64_t gpa, size_t n);
    void put_floats(uint64_t gpa, float first, size_t n);
};

// Nodes added last-first run in their edges' order; a launch reads guest RAM then.
void graph_runs_in_dependency_order(GraphVm& v);
// A kernel node's parameters set in an exec, then in the graph; updates.
void kernel_node_params_in_graph_and_exec(GraphVm& v);
// Work captured over two streams (joined by events) is recorded, not run,
// then replayed by a launch; scatter-gather copies are refused meanwhile.
void capture_records_and_replays(GraphVm& v);
// A capturing stream's synchronize is refused and invalidates the capture.
void synchronizing_a_capture_invalidates_it(GraphVm& v);
// A graph's edges, roots, each node's dependencies, dependents and type
// read back; a clone has copies of each node (found through the original's)
// and runs as the original does.
void graph_shape_and_clone(GraphVm& v);
// Stream attributes set on a created stream and read back; the defaults of
// one never set; a window over memory that is not the VM's refused.
void stream_attributes_round_trip(GraphVm& v);
// Event record and wait nodes (their kinds, events read back and changed in
// the graph and in an exec, an event destroyed while a node names it still
// recorded); a memset node switched off in an exec and on again; an exec's flags.
void event_nodes_and_switched_off_nodes(GraphVm& v);
// Conditional nodes: IF (with an else body) and SWITCH nodes run the body
// their conditional's default picks at each launch; body graphs take nodes
// but are never destroyed by the guest, and go with their node or graph;
// conditionals of another graph are refused. The graph under a capture:
// named while the capture runs, given a conditional node between captured
// work, its dependencies set to that node, and named again at the end; a
// capture into a graph of the guest's adds to it.
void conditional_nodes_and_capture_graphs(GraphVm& v);
// Child graph nodes: the node holds a copy of the child (later changes to
// the child do not reach it), named as a graph of the node's that the guest
// never destroys; a graph cannot hold itself.
void child_graph_nodes(GraphVm& v);
// Graph memory: an allocation node's address is the VM's (nodes and copies
// name it) and counted while its graph or an exec holds it, given back with
// the last; a capture's allocations and frees become its nodes, and an
// invalidated capture gives its allocations back; an allocation a launch
// leaves live is read and freed outside the graph; hostile values refused.
void graph_memory_nodes(GraphVm& v);

} // namespace kvmgpu::vgpu::test
