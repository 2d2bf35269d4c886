// CUDA graphs and stream capture through the ring, on the host backend
// (graphs recorded and replayed with its reference kernels): explicit
// graphs run in dependency order, captures record instead of running,
// kernel nodes are checked as launches are, every hostile field is
// refused, and graphs go with their context, RESET and the node quota.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <memory>

#include "tests/support/graph_cases.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

struct VgpuGraph : ::testing::Test {
    VgpuRig rig{VgpuOptions{.max_handles = 64, .max_graph_nodes = 16}};
    std::unique_ptr<GraphVm> vm;
    uint64_t a = 0, b = 0, c = 0;
    void SetUp() override {
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
        vm = std::make_unique<GraphVm>(rig);
        a = vm->a, b = vm->b, c = vm->c;
    }
    uint64_t ok(const Cmd& cmd) { return vm->ok(cmd); }
    uint64_t graph() { return vm->graph(); }
    Done memcpy_node(uint64_t g, uint64_t dir, uint64_t dst, uint64_t src, uint64_t n) {
        return vm->memcpy_node(g, dir, dst, src, n);
    }
    Done memset_node(uint64_t g, uint64_t dptr, uint64_t value, uint64_t element, uint64_t count) {
        return vm->memset_node(g, dptr, value, element, count);
    }
    Cmd kernel_cmd(uint16_t op, uint64_t target, uint32_t n, uint64_t exec = 0, uint32_t bytes = 28) {
        return vm->kernel_cmd(op, target, a, b, c, n, exec, bytes);
    }
    Done edge(uint64_t g, uint64_t from, uint64_t to, uint64_t remove = 0) { return vm->edge(g, from, to, remove); }
};

TEST_F(VgpuGraph, ExplicitGraphRunsInDependencyOrderEachLaunch) { graph_runs_in_dependency_order(*vm); }

TEST_F(VgpuGraph, KernelNodeParamsInTheGraphAndInTheExec) { kernel_node_params_in_graph_and_exec(*vm); }

TEST_F(VgpuGraph, CaptureRecordsTheStreamsWorkAndReplaysIt) { capture_records_and_replays(*vm); }

TEST_F(VgpuGraph, SynchronizingACaptureInvalidatesIt) { synchronizing_a_capture_invalidates_it(*vm); }

TEST_F(VgpuGraph, ShapeReadBackAndClone) { graph_shape_and_clone(*vm); }

TEST_F(VgpuGraph, StreamAttributesRoundTrip) { stream_attributes_round_trip(*vm); }

TEST_F(VgpuGraph, EventNodesAndSwitchedOffNodes) { event_nodes_and_switched_off_nodes(*vm); }

TEST_F(VgpuGraph, GraphMemoryNodes) { graph_memory_nodes(*vm); }
// Room for the conditionals' bodies and the execs that copy them.
TEST(VgpuGraphConditionals, ConditionalNodesAndCaptureGraphs) {
    VgpuRig rig{VgpuOptions{.max_handles = 64, .max_graph_nodes = 128}};
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    GraphVm vm(rig);
    conditional_nodes_and_capture_graphs(vm);
}
TEST_F(VgpuGraph, ChildGraphNodes) { child_graph_nodes(*vm); }

// A capture's graph named to the guest goes when its stream goes unended.
TEST_F(VgpuGraph, ACaptureGraphGoesWithItsStream) {
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 2}});
    const Done cg = rig.call({.opcode = VGPU_OP_STREAM_CAPTURE_GRAPH, .args = {s, 0}});
    ASSERT_EQ(cg.status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {cg.r0, 0}}).status, VGPU_SUCCESS);
    ok({.opcode = VGPU_OP_STREAM_DESTROY, .args = {s}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {cg.r0, 0}}).status, VGPU_ERROR_INVALID_HANDLE);
}

// Graph allocations go with their context, as its graphs do.
TEST_F(VgpuGraph, GraphMemoryGoesWithItsContext) {
    const uint64_t ctx = ok({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}});
    const uint64_t g = graph();
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_ADD_MEM_ALLOC_NODE, .args = {g, 8192}}).status, VGPU_SUCCESS);
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}});
    ok({.opcode = VGPU_OP_MEM_ALLOC_CAPTURED, .args = {s, 4096}}); // a capture never ended
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_MEM_ATTRIBUTE, .args = {0, 0, 0, 0}}).r0, 12288u);
    ok({.opcode = VGPU_OP_CTX_DESTROY, .args = {ctx}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_MEM_ATTRIBUTE, .args = {0, 0, 0, 0}}).r0, 0u);
}

// An allocation freed earlier in the same capture lends its address to the
// next one that fits (the host backend does so, the driver may): one range
// of the VM's, held by both nodes, given back once neither graph holds it.
TEST_F(VgpuGraph, AGraphAllocationsAddressGivenAgainIsOneRange) {
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    auto graph_memory = [&] { return rig.call({.opcode = VGPU_OP_GRAPH_MEM_ATTRIBUTE, .args = {0, 0, 0, 0}}).r0; };
    ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}});
    const uint64_t first = ok({.opcode = VGPU_OP_MEM_ALLOC_CAPTURED, .args = {s, 4096}});
    ok({.opcode = VGPU_OP_MEM_FREE_GRAPH_ALLOCATION, .args = {s, first}, .flags = VGPU_CMD_FLAG_ASYNC});
    const uint64_t second = ok({.opcode = VGPU_OP_MEM_ALLOC_CAPTURED, .args = {s, 2048}});
    EXPECT_EQ(second, first);
    EXPECT_EQ(graph_memory(), 4096u);
    ok({.opcode = VGPU_OP_MEMSET_D32, .args = {second, 0x40400000, 512, s}, .flags = VGPU_CMD_FLAG_ASYNC});
    const uint64_t g = ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}});
    const uint64_t exec = ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, s}});
    ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g}});
    EXPECT_EQ(graph_memory(), 4096u) << "the exec still holds both nodes";
    ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec}});
    EXPECT_EQ(graph_memory(), 0u);
}

// GRAPH_NEXT_NODE_DEPENDENCIES: taken by the very next command's node of
// its graph only (dropped by any other command), looked up when that node
// is made, and every hostile value refused.
TEST_F(VgpuGraph, NextNodeDependenciesAreTheNextNodesOnly) {
    const uint64_t g = graph(), other = graph();
    const uint64_t first = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const uint64_t second = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const uint64_t elsewhere = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {other}});
    ASSERT_EQ(vm->next_depends_on(g, {first}).status, VGPU_SUCCESS);
    ASSERT_EQ(vm->next_depends_on(g, {second}, 1).status, VGPU_SUCCESS); // appended
    const uint64_t third = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const uint64_t fourth = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}}); // none left for it
    using Edges = std::vector<std::pair<uint64_t, uint64_t>>;
    EXPECT_EQ(vm->pairs(third, VGPU_GRAPH_EDGES_INTO), (Edges{{first, third}, {second, third}}));
    EXPECT_TRUE(vm->pairs(fourth, VGPU_GRAPH_EDGES_INTO).empty());
    // Given for g, then a node of another graph: dropped, not carried to g's next.
    ASSERT_EQ(vm->next_depends_on(g, {first}).status, VGPU_SUCCESS);
    ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {other}});
    EXPECT_TRUE(vm->pairs(ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}}), VGPU_GRAPH_EDGES_INTO).empty());
    // Given, then any other command, or a node command refused before its
    // node is made: dropped too (a guest call that failed its own checks
    // must not hand its dependencies to the next node).
    ASSERT_EQ(vm->next_depends_on(g, {first}).status, VGPU_SUCCESS);
    ok({.opcode = VGPU_OP_MEM_GET_INFO});
    EXPECT_TRUE(vm->pairs(ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}}), VGPU_GRAPH_EDGES_INTO).empty());
    ASSERT_EQ(vm->next_depends_on(g, {first}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_ADD_EVENT_NODE, .args = {g, 12345, 0}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_TRUE(vm->pairs(ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}}), VGPU_GRAPH_EDGES_INTO).empty());
    // A node of another graph, or one that has gone: the node is refused.
    ASSERT_EQ(vm->next_depends_on(g, {elsewhere}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}}).status, VGPU_ERROR_INVALID_VALUE);
    ok({.opcode = VGPU_OP_GRAPH_DESTROY_NODE, .args = {fourth}});
    ASSERT_EQ(vm->next_depends_on(g, {fourth}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}}).status, VGPU_ERROR_INVALID_VALUE);
    // Counts, flags and graphs the guest made up.
    auto next = [&](std::vector<uint64_t> args, size_t payload) {
        return rig.call({.opcode = VGPU_OP_GRAPH_NEXT_NODE_DEPENDENCIES, .args = args,
                         .payload = std::vector<uint8_t>(payload)}).status;
    };
    EXPECT_EQ(next({g + 1000, 0, 0}, 0), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(next({g, VGPU_GRAPH_NODES_PER_CALL + 1, 0}, VGPU_PAYLOAD_BYTES), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(next({g, 4, 0}, 16), VGPU_ERROR_INVALID_VALUE); // more than the payload holds
    EXPECT_EQ(next({g, 0, 2}, 0), VGPU_ERROR_INVALID_VALUE);
    for (int i = 0; i < 16; ++i) ASSERT_EQ(next({g, 1, 1}, 8), VGPU_SUCCESS); // max_graph_nodes in all
    EXPECT_EQ(next({g, 1, 1}, 8), VGPU_ERROR_INVALID_VALUE);
}

// Every handle and value the event-node, enable and exec-flag opcodes take, hostile.
TEST_F(VgpuGraph, EventNodesAndEnablingRefuseHostileArguments) {
    const uint64_t g = graph(), g2 = graph();
    const uint64_t ev = ok({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    const uint64_t rec = ok({.opcode = VGPU_OP_GRAPH_ADD_EVENT_NODE, .args = {g, ev, 0}});
    const uint64_t set = memset_node(g, c, 0, 4, 4).r0;
    const uint64_t other = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g2}});
    const uint64_t exec = ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    const uint64_t exec2 = ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g2, 0}});
    auto status = [&](uint16_t op, std::vector<uint64_t> args) { return rig.call({.opcode = op, .args = args}).status; };
    for (uint64_t bad : std::vector<uint64_t>{0, ev + 100, ev ^ (1ull << 40), s, g, ~0ull}) {
        EXPECT_EQ(status(VGPU_OP_GRAPH_ADD_EVENT_NODE, {g, bad, 0}), VGPU_ERROR_INVALID_HANDLE); // not an event
        EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, {0, rec, bad, 0}), VGPU_ERROR_INVALID_HANDLE);
    }
    for (uint64_t bad : std::vector<uint64_t>{0, g + 100, g ^ (1ull << 40), rec, ev, ~0ull}) {
        EXPECT_EQ(status(VGPU_OP_GRAPH_ADD_EVENT_NODE, {bad, ev, 1}), VGPU_ERROR_INVALID_HANDLE); // not a graph
        EXPECT_EQ(status(VGPU_OP_GRAPH_EXEC_GET_FLAGS, {bad}), VGPU_ERROR_INVALID_HANDLE);       // not an exec
        EXPECT_EQ(status(VGPU_OP_GRAPH_NODE_SET_ENABLED, {bad, set, 0}), VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(status(VGPU_OP_GRAPH_NODE_GET_ENABLED, {bad, set}), VGPU_ERROR_INVALID_HANDLE);
        if (bad != 0) { // exec 0 names the graph's own node
            EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, {bad, rec, ev, 0}), VGPU_ERROR_INVALID_HANDLE);
        }
    }
    for (uint64_t bad : std::vector<uint64_t>{0, rec + 100, rec ^ (1ull << 40), g, exec, ~0ull}) { // not a node
        EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, {0, bad, ev, 0}), VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_GET_EVENT, {bad, 0}), VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(status(VGPU_OP_GRAPH_NODE_SET_ENABLED, {exec, bad, 0}), VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(status(VGPU_OP_GRAPH_NODE_GET_ENABLED, {exec, bad}), VGPU_ERROR_INVALID_HANDLE);
    }
    // Kinds and flags out of range; a node of the wrong kind; an exec of another graph.
    for (uint64_t bad : std::vector<uint64_t>{2, 1ull << 32, ~0ull}) {
        EXPECT_EQ(status(VGPU_OP_GRAPH_ADD_EVENT_NODE, {g, ev, bad}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, {0, rec, ev, bad}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_GET_EVENT, {rec, bad}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(status(VGPU_OP_GRAPH_NODE_SET_ENABLED, {exec, set, bad}), VGPU_ERROR_INVALID_VALUE);
    }
    EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, {0, set, ev, 0}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, {0, rec, ev, 1}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, {exec2, rec, ev, 0}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_NODE_SET_ENABLED, {exec2, set, 0}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_NODE_GET_ENABLED, {exec2, set}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_NODE_SET_ENABLED, {exec2, other, 0}), VGPU_ERROR_INVALID_VALUE); // an empty node
    // A node added after the exec was made is not in it.
    const uint64_t late = memset_node(g, c, 0, 4, 4).r0;
    EXPECT_EQ(status(VGPU_OP_GRAPH_NODE_SET_ENABLED, {exec, late, 0}), VGPU_ERROR_INVALID_VALUE);
    // Another context's event, and the event of a context since destroyed.
    const uint64_t primary = ok({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {0}});
    const uint64_t ctx = ok({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}});
    const uint64_t foreign = ok({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    EXPECT_EQ(status(VGPU_OP_GRAPH_ADD_EVENT_NODE, {g, ev, 0}), VGPU_ERROR_INVALID_HANDLE); // g is not this context's
    ok({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {primary}});
    EXPECT_EQ(status(VGPU_OP_GRAPH_ADD_EVENT_NODE, {g, foreign, 0}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, {0, rec, foreign, 0}), VGPU_ERROR_INVALID_HANDLE);
    ok({.opcode = VGPU_OP_CTX_DESTROY, .args = {ctx}});
    ok({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {primary}});
    EXPECT_EQ(status(VGPU_OP_GRAPH_ADD_EVENT_NODE, {g, foreign, 0}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_EVENT_NODE_GET_EVENT, {rec, 0}), VGPU_SUCCESS); // still ev
}

// Events destroyed while a node names them stay the driver's until their
// context goes, so they count against the event table: a guest cannot make
// the VMM hold more of them than max_handles.
TEST_F(VgpuGraph, EventsNamedByNodesAreKeptBoundedAndFreedWithTheirContext) {
    const uint64_t primary = ok({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {0}});
    const uint64_t ctx = ok({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}});
    const uint64_t before = rig.host->live_events();
    const uint64_t g = graph();
    const uint64_t first = ok({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    const uint64_t rec = ok({.opcode = VGPU_OP_GRAPH_ADD_EVENT_NODE, .args = {g, first, 0}});
    ok({.opcode = VGPU_OP_EVENT_DESTROY, .args = {first}});
    int made = 1;
    for (; made < 1000; ++made) {
        const Done e = rig.call({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
        if (e.status != VGPU_SUCCESS) {
            EXPECT_EQ(e.status, VGPU_ERROR_OUT_OF_MEMORY);
            break;
        }
        ok({.opcode = VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, .args = {0, rec, e.r0, 0}});
        ok({.opcode = VGPU_OP_EVENT_DESTROY, .args = {e.r0}});
    }
    EXPECT_EQ(made, 64); // max_handles: the retired ones held the table full
    EXPECT_EQ(rig.host->live_events(), before + static_cast<uint64_t>(made)); // none freed under the node
    // An event no node named is freed at once, as before.
    ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g}});
    ok({.opcode = VGPU_OP_CTX_DESTROY, .args = {ctx}});
    EXPECT_EQ(rig.host->live_events(), before);
    ok({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {primary}});
    const uint64_t plain = ok({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    ok({.opcode = VGPU_OP_EVENT_DESTROY, .args = {plain}});
    EXPECT_EQ(rig.host->live_events(), before);
}

// A captured graph's nodes have their kinds; its clone replays as it does.
TEST_F(VgpuGraph, CapturedGraphClones) {
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}});
    ok({.opcode = VGPU_OP_MEMSET_D32, .args = {c, 0x40400000 /* 3.0f */, 16, s}, .flags = VGPU_CMD_FLAG_ASYNC});
    ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, c, 64, s}, .flags = VGPU_CMD_FLAG_ASYNC});
    const uint64_t g = ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}});
    const auto roots = vm->pairs(g, VGPU_GRAPH_EDGES_ROOTS);
    ASSERT_EQ(roots.size(), 2u); // the host backend records no edges: both are roots
    std::vector<uint64_t> types{vm->node_type(roots[0].second), vm->node_type(roots[1].second)};
    std::sort(types.begin(), types.end());
    EXPECT_EQ(types, (std::vector<uint64_t>{1, 2})); // a memcpy and a memset, not empty nodes
    const uint64_t copy = ok({.opcode = VGPU_OP_GRAPH_CLONE, .args = {g}});
    ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g}});
    const uint64_t exec = ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {copy, 0}});
    ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, s}});
    EXPECT_EQ(vm->floats(kGraphOut, 16)[15], 3.0f);
}

// Every handle and value the shape and clone opcodes take, hostile.
TEST_F(VgpuGraph, ShapeAndCloneRefuseHostileArguments) {
    const uint64_t g = graph(), g2 = graph();
    const uint64_t n = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    for (uint64_t bad : std::vector<uint64_t>{0, g + 100, g ^ (1ull << 40), s, ~0ull}) {
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_CLONE, .args = {bad}}).status, VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_GET_TYPE, .args = {bad}}).status, VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {bad, n}}).status,
                  VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {g, bad}}).status,
                  VGPU_ERROR_INVALID_HANDLE);
        for (uint64_t kind = 0; kind < 4; ++kind)
            EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_EDGES, .args = {bad, 0, kind}}).status,
                      VGPU_ERROR_INVALID_HANDLE);
    }
    // A node where a graph is asked about, and a graph where a node is.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_CLONE, .args = {n}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_EDGES, .args = {n, 0, VGPU_GRAPH_EDGES_ALL}}).status,
              VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_EDGES, .args = {g, 0, VGPU_GRAPH_EDGES_INTO}}).status,
              VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_GET_TYPE, .args = {g}}).status, VGPU_ERROR_INVALID_HANDLE);
    for (uint64_t kind : std::vector<uint64_t>{4, uint64_t{1} << 32, ~0ull})
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_EDGES, .args = {g, 0, kind}}).status, VGPU_ERROR_INVALID_VALUE);
    for (uint64_t first : std::vector<uint64_t>{2, ~0ull})
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_EDGES, .args = {g, first, VGPU_GRAPH_EDGES_ROOTS}}).status,
                  VGPU_ERROR_INVALID_VALUE);
    // Finding in a graph that is no clone, or in a clone of another graph.
    const uint64_t copy2 = ok({.opcode = VGPU_OP_GRAPH_CLONE, .args = {g2}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {g2, n}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {copy2, n}}).status,
              VGPU_ERROR_INVALID_VALUE);
    // The clone's handles go with the clone.
    const uint64_t copy = ok({.opcode = VGPU_OP_GRAPH_CLONE, .args = {g}});
    const uint64_t n2 = ok({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {copy, n}});
    ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {copy}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_GET_TYPE, .args = {n2}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {copy, n}}).status,
              VGPU_ERROR_INVALID_HANDLE);
}

// A clone's nodes count against max_graph_nodes (16 here) as a new graph's.
TEST_F(VgpuGraph, ClonesAreBoundedByTheNodeQuota) {
    const uint64_t g = graph();
    for (int i = 0; i < 6; ++i) ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const uint64_t copy = ok({.opcode = VGPU_OP_GRAPH_CLONE, .args = {g}}); // 12 held
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_CLONE, .args = {g}}).status, VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_CLONE, .args = {copy}}).status, VGPU_ERROR_OUT_OF_MEMORY);
    ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {copy}}); // gives its 6 back
    ok({.opcode = VGPU_OP_GRAPH_CLONE, .args = {g}});
}

// Stream attributes: the attribute, the stream, and every field of the value, hostile.
TEST_F(VgpuGraph, StreamAttributesRefuseHostileValues) {
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    auto set = [&](uint64_t stream, uint64_t attr, const vgpu_stream_attr_value& value) {
        vgpu_args_stream_attribute args{stream, attr, value};
        Cmd cmd{.opcode = VGPU_OP_STREAM_SET_ATTRIBUTE, .args = std::vector<uint64_t>(6)};
        std::memcpy(cmd.args.data(), &args, sizeof args);
        return rig.call(cmd).status;
    };
    auto get = [&](uint64_t stream, uint64_t attr) {
        return rig.call({.opcode = VGPU_OP_STREAM_GET_ATTRIBUTE, .args = {stream, attr}}).status;
    };
    const uint64_t g = graph();
    for (uint64_t bad : std::vector<uint64_t>{s + 100, s ^ (1ull << 40), g, ~0ull}) {
        EXPECT_EQ(set(bad, VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY, {.value = 1}), VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(get(bad, VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY), VGPU_ERROR_INVALID_HANDLE);
    }
    // Launch- and node-only attributes, priority (the guest's), unknown numbers; one not offered.
    for (uint64_t attr : std::vector<uint64_t>{0, 2, 4, 8, 12, 99, ~0ull}) {
        EXPECT_EQ(set(s, attr, {}), VGPU_ERROR_INVALID_VALUE) << attr;
        EXPECT_EQ(get(s, attr), VGPU_ERROR_INVALID_VALUE) << attr;
    }
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_NVLINK_UTIL_CENTRIC_SCHEDULING, {}), VGPU_ERROR_NOT_SUPPORTED);
    // Values outside their enums, and fields the attribute does not use.
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY, {.value = 0}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY, {.value = 5}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY, {.base = a, .value = 1}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN, {.value = 2}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP, {.value = 2}), VGPU_ERROR_INVALID_VALUE); // 2 domains here
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP, {.value = 2 << 8}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP, {.value = 1u << 16}), VGPU_ERROR_INVALID_VALUE);
    // The window: its ratio, its properties, its range.
    auto window = [&](uint64_t base, uint64_t bytes, float ratio, uint32_t hit, uint32_t miss) {
        vgpu_stream_attr_value w{.base = base, .bytes = bytes, .hit_ratio_bits = 0, .hit_prop = hit, .miss_prop = miss,
                                 .value = 0};
        std::memcpy(&w.hit_ratio_bits, &ratio, sizeof ratio);
        return set(s, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW, w);
    };
    EXPECT_EQ(window(a, 64, 1.0f, 2, 0), VGPU_SUCCESS);
    EXPECT_EQ(window(a, 64, 1.5f, 2, 0), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(window(a, 64, -0.1f, 2, 0), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(window(a, 64, std::nanf(""), 2, 0), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(window(a, 64, 0.5f, 3, 0), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(window(a, 64, 0.5f, 0, 2), VGPU_ERROR_INVALID_VALUE); // a miss cannot persist
    EXPECT_EQ(window(a + 4096 - 8, 64, 0.5f, 0, 0), VGPU_ERROR_INVALID_VALUE); // past a's end
    EXPECT_EQ(window(~0ull - 8, 64, 0.5f, 0, 0), VGPU_ERROR_INVALID_VALUE);   // wraps
    EXPECT_EQ(window(0, 64, 0.5f, 0, 0), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(window(a, ~0ull, 0.5f, 0, 0), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(window(kRamBytes - 64, 64, 0.5f, 0, 0), VGPU_ERROR_INVALID_VALUE); // guest RAM is not a window
    vgpu_stream_attr_value stray{};
    stray.value = 1;
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW, stray), VGPU_ERROR_INVALID_VALUE);
    // A freed allocation's window goes with the allocation's range: refused after.
    ok({.opcode = VGPU_OP_MEM_FREE, .args = {a}});
    EXPECT_EQ(window(a, 64, 0.5f, 0, 0), VGPU_ERROR_INVALID_VALUE);
    // A destroyed stream's attributes go with it.
    ok({.opcode = VGPU_OP_STREAM_DESTROY, .args = {s}});
    EXPECT_EQ(get(s, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW), VGPU_ERROR_INVALID_HANDLE);
}

// (Here only: what the driver does to the capture after this answer is not checked.)
TEST_F(VgpuGraph, OnlyTheOriginStreamEndsACapture) {
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    const uint64_t s2 = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    const uint64_t ev = ok({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 1}});
    ok({.opcode = VGPU_OP_EVENT_RECORD, .args = {ev, s}, .flags = VGPU_CMD_FLAG_ASYNC});
    ok({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {s2, ev, 0}, .flags = VGPU_CMD_FLAG_ASYNC});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s2}}).status, VGPU_ERROR_STREAM_CAPTURE_UNMATCHED);
    EXPECT_NE(ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}}), 0u);
}

TEST_F(VgpuGraph, HostileFieldsAreRefused) {
    const uint64_t g = graph(), g2 = graph();
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    const uint64_t n = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const uint64_t m = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const uint64_t other = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g2}});
    for (uint64_t bad : std::vector<uint64_t>{0, g + 100, g ^ (1ull << 40), s, n, ~0ull}) {
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {bad}}).status, VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {bad, 0}}).status, VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {bad, 0}}).status, VGPU_ERROR_INVALID_HANDLE);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY_NODE, .args = {bad == n ? g : bad}}).status,
                  VGPU_ERROR_INVALID_HANDLE);
    }
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_CREATE, .args = {1}}).status, VGPU_ERROR_INVALID_VALUE);
    // Edges: between this graph's nodes only, never to itself, a bounded count.
    EXPECT_EQ(edge(g, n, other).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(edge(g, n, n).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(edge(g, n, m, 1).status, VGPU_ERROR_INVALID_VALUE); // no such edge to remove
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DEPENDENCIES, .args = {g, 0, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DEPENDENCIES, .args = {g, VGPU_GRAPH_EDGES_PER_CALL + 1, 0}}).status,
              VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DEPENDENCIES, .args = {g, 2, 0}, .payload = std::vector<uint8_t>(16)}).status,
              VGPU_ERROR_INVALID_VALUE); // two pairs, one pair's bytes
    // A cycle cannot be instantiated.
    ASSERT_EQ(edge(g, n, m).status, VGPU_SUCCESS);
    ASSERT_EQ(edge(g, m, n).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}}).status, VGPU_ERROR_INVALID_VALUE);
    // Upload and device launch are not offered (auto-free and node priority are: GraphInstantiateFlags).
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g2, 2}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g2, 4}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g2, 16}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {g, 3}}).status, VGPU_ERROR_INVALID_VALUE);
    // Copy and memset nodes: as the commands they stand for.
    EXPECT_EQ(memcpy_node(g2, VGPU_OP_MEMSET_D8, a, b, 16).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memcpy_node(g2, VGPU_OP_MEMCPY_DTOD, a, b, 0).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memcpy_node(g2, VGPU_OP_MEMCPY_DTOD, a, b, 4097).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memcpy_node(g2, VGPU_OP_MEMCPY_DTOD, a, ~0ull - 8, 16).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memcpy_node(g2, VGPU_OP_MEMCPY_HTOD, a, kRamBytes - 8, 16).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memcpy_node(g2, VGPU_OP_MEMCPY_DTOH, ~0ull, a, 16).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memset_node(g2, a, 1, 3, 4).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memset_node(g2, a, 0x100, 1, 4).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memset_node(g2, a + 1, 1, 4, 4).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memset_node(g2, a, 1, 4, 1ull << 62).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(memset_node(g2, a, 1, 4, 1025).status, VGPU_ERROR_INVALID_VALUE);
    // Kernel nodes: as a packed launch.
    EXPECT_EQ(rig.call(kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g2, 8, 0, 24)).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call(kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g2, 2048)).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call(kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g2, 8, n)).status, VGPU_ERROR_INVALID_VALUE);
    Cmd short_payload = kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g2, 8);
    short_payload.payload_len = 4;
    EXPECT_EQ(rig.call(short_payload).status, VGPU_ERROR_INVALID_VALUE);
    short_payload.payload_len = 20; // the exec field and part of the buffer
    EXPECT_EQ(rig.call(short_payload).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call(kernel_cmd(VGPU_OP_GRAPH_KERNEL_NODE_SET_PARAMS, n, 8)).status,
              VGPU_ERROR_INVALID_VALUE); // an empty node has no kernel
    EXPECT_EQ(rig.call(kernel_cmd(VGPU_OP_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, n, 8, g)).status,
              VGPU_ERROR_INVALID_HANDLE); // a graph is not an exec
    // A destroyed node's handle is stale; its edges went with it.
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY_NODE, .args = {m}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY_NODE, .args = {m}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_NE(rig.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}}).r0, 0u);
    // AUTO_FREE_ON_LAUNCH (PyTorch's) and USE_NODE_PRIORITY instantiate as flags 0 do.
    EXPECT_NE(rig.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 1 | 8}}).r0, 0u);
    // A destroyed graph takes its nodes' handles.
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY_NODE, .args = {n}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g}}).status, VGPU_ERROR_INVALID_HANDLE);
}

TEST_F(VgpuGraph, NodesAreBoundedInGraphsExecsAndCaptures) {
    const uint64_t g = graph();
    for (int i = 0; i < 8; ++i) ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const uint64_t exec = ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}}); // 16 held now
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}}).status, VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}}).status, VGPU_ERROR_OUT_OF_MEMORY);
    ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec}});
    ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g}});
    // A capture may not record more than the quota either.
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 2}});
    uint32_t refused = 0;
    for (int i = 0; i < 20; ++i)
        refused += rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {a, 1, 16, s}, .flags = VGPU_CMD_FLAG_ASYNC}).status ==
                   VGPU_ERROR_OUT_OF_MEMORY;
    EXPECT_EQ(refused, 4u);
    const uint64_t captured = ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {captured, 0}}).r0, 16u);
    // After the capture, work is not counted.
    for (int i = 0; i < 20; ++i) ok({.opcode = VGPU_OP_MEMSET_D8, .args = {a, 1, 16, s}, .flags = VGPU_CMD_FLAG_ASYNC});
}

TEST_F(VgpuGraph, AContextGoesWithItsOpenCapture) {
    const uint64_t ctx = ok({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}});
    const uint64_t d = rig.alloc(4096);
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}});
    ok({.opcode = VGPU_OP_MEMSET_D8, .args = {d, 1, 16, s}, .flags = VGPU_CMD_FLAG_ASYNC});
    ok({.opcode = VGPU_OP_CTX_DESTROY, .args = {ctx}});
    // The VM carries on: a new capture begins and ends in the primary context.
    const uint64_t primary = ok({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {0}});
    ok({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {primary}});
    const uint64_t s2 = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s2, 0}});
    ok({.opcode = VGPU_OP_MEMSET_D8, .args = {a, 1, 16, s2}, .flags = VGPU_CMD_FLAG_ASYNC});
    const uint64_t g = ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s2}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {g, 0}}).r0, 1u);
}

TEST_F(VgpuGraph, GraphsGoWithTheirContextAndWithReset) {
    const uint64_t ctx = ok({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}});
    const uint64_t g = graph();
    const uint64_t n = ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const uint64_t exec = ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    // Another context does not see them.
    const uint64_t primary = ok({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {0}});
    ok({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {primary}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}}).status, VGPU_ERROR_INVALID_HANDLE);
    ok({.opcode = VGPU_OP_CTX_DESTROY, .args = {ctx}});
    ok({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {primary}});
    const uint64_t g2 = graph();
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY_NODE, .args = {n}}).status, VGPU_ERROR_INVALID_HANDLE);
    // The quota came back: 16 more nodes fit.
    for (int i = 0; i < 16; ++i) ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g2}});
    rig.reset();
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g2}}).status, VGPU_ERROR_INVALID_HANDLE);
    const uint64_t g3 = graph();
    for (int i = 0; i < 16; ++i) ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g3}});
}

// The same cases with the host backend in a GPU worker process (the worker
// runs the same dispatch; the graphs live in its backend).
TEST(VgpuGraphInWorker, TheSharedCases) {
    for (auto graph_case : {graph_runs_in_dependency_order, kernel_node_params_in_graph_and_exec,
                            capture_records_and_replays, synchronizing_a_capture_invalidates_it,
                            graph_memory_nodes}) {
        WorkerVgpu w;
        ASSERT_EQ(w.rig.enable(), VGPU_SUCCESS);
        GraphVm vm(w.rig);
        graph_case(vm);
    }
}

} // namespace
} // namespace kvmgpu::vgpu::test
