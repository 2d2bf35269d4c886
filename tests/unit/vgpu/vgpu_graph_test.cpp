// CUDA graphs and stream capture through the ring, on the host backend
// (graphs recorded and replayed with its reference kernels): explicit
// graphs run in dependency order, captures record instead of running,
// kernel nodes are checked as launches are, every hostile field is
// refused, and graphs go with their context, RESET and the node quota.
#include <cstring>

#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr uint64_t kIn = kDataGpa, kOut = kDataGpa + 0x10000;

struct VgpuGraph : ::testing::Test {
    VgpuRig rig{VgpuOptions{.max_handles = 64, .max_graph_nodes = 16}};
    uint64_t add = 0, a = 0, b = 0, c = 0;
    void SetUp() override {
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
        rig.module_with("vector_add", &add);
        a = rig.alloc(4096), b = rig.alloc(4096), c = rig.alloc(4096);
    }
    uint64_t ok(const Cmd& cmd) {
        const Done d = rig.call(cmd);
        EXPECT_EQ(d.status, VGPU_SUCCESS) << "opcode " << cmd.opcode;
        return d.r0;
    }
    uint64_t graph() { return ok({.opcode = VGPU_OP_GRAPH_CREATE, .args = {0}}); }
    Done memcpy_node(uint64_t g, uint64_t dir, uint64_t dst, uint64_t src, uint64_t n) {
        return rig.call({.opcode = VGPU_OP_GRAPH_ADD_MEMCPY_NODE, .args = {g, dir, dst, src, n}});
    }
    Done memset_node(uint64_t g, uint64_t dptr, uint64_t value, uint64_t element, uint64_t count) {
        return rig.call({.opcode = VGPU_OP_GRAPH_ADD_MEMSET_NODE, .args = {g, dptr, value, element, count}});
    }
    // vector_add(x, y, out, n) as a kernel-node command on `target`.
    Cmd kernel_cmd(uint16_t op, uint64_t target, uint64_t x, uint64_t y, uint64_t out, uint32_t n, uint64_t exec = 0,
                   uint32_t bytes = 28) {
        vgpu_launch_args l{add, target, {1, 1, 1}, {n, 1, 1}, 0, bytes};
        Cmd cmd{.opcode = op, .args = std::vector<uint64_t>(6)};
        std::memcpy(cmd.args.data(), &l, sizeof l);
        cmd.payload.resize(8 + 28);
        std::memcpy(cmd.payload.data(), &exec, 8);
        std::memcpy(cmd.payload.data() + 8, &x, 8);
        std::memcpy(cmd.payload.data() + 16, &y, 8);
        std::memcpy(cmd.payload.data() + 24, &out, 8);
        std::memcpy(cmd.payload.data() + 32, &n, 4);
        return cmd;
    }
    Done edge(uint64_t g, uint64_t from, uint64_t to, uint64_t remove = 0) {
        std::vector<uint8_t> p(16);
        std::memcpy(p.data(), &from, 8);
        std::memcpy(p.data() + 8, &to, 8);
        return rig.call({.opcode = VGPU_OP_GRAPH_DEPENDENCIES, .args = {g, 1, remove}, .payload = p});
    }
    std::vector<float> floats(uint64_t gpa, size_t n) {
        std::vector<float> v(n);
        rig.get(gpa, v.data(), n * sizeof(float));
        return v;
    }
    void put_floats(uint64_t gpa, float first, size_t n) {
        std::vector<float> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = first + static_cast<float>(i);
        rig.put(gpa, v.data(), n * sizeof(float));
    }
};

TEST_F(VgpuGraph, ExplicitGraphRunsInDependencyOrderEachLaunch) {
    const uint64_t g = graph();
    // Added last-first: the edges, not the order added, decide.
    const uint64_t out = memcpy_node(g, VGPU_OP_MEMCPY_DTOH, kOut, c, 64 * 4).r0;
    const uint64_t sum = ok(kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g, a, b, c, 64));
    const uint64_t in_a = memcpy_node(g, VGPU_OP_MEMCPY_HTOD, a, kIn, 64 * 4).r0;
    const uint64_t set_b = memset_node(g, b, 0x3f800000 /* 1.0f */, 4, 64).r0;
    ASSERT_EQ(edge(g, in_a, sum).status, VGPU_SUCCESS);
    ASSERT_EQ(edge(g, set_b, sum).status, VGPU_SUCCESS);
    ASSERT_EQ(edge(g, sum, out).status, VGPU_SUCCESS);
    const Done nodes = rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {g, 0}});
    ASSERT_EQ(nodes.r0, 4u);
    uint64_t first;
    std::memcpy(&first, nodes.payload.data(), 8);
    EXPECT_EQ(first, out); // the handles the adds gave

    const uint64_t exec = ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    put_floats(kIn, 10.0f, 64);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(floats(kOut, 64)[5], 16.0f);
    // A launch reads the guest RAM the node names at that time.
    put_floats(kIn, 100.0f, 64);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}, .flags = VGPU_CMD_FLAG_ASYNC}).status,
              VGPU_SUCCESS);
    EXPECT_EQ(floats(kOut, 64)[63], 164.0f);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_UPLOAD, .args = {exec, 0}}).status, VGPU_SUCCESS);
}

TEST_F(VgpuGraph, KernelNodeParamsInTheGraphAndInTheExec) {
    const uint64_t g = graph();
    const uint64_t k = ok(kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g, a, b, c, 8));
    const uint64_t exec = ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    put_floats(kIn, 1.0f, 16);
    ok({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {a, kIn, 64, 0}});
    ok({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {b, kIn, 64, 0}});
    // The exec's node writes a now (a + b into a), the graph's still c.
    ok(kernel_cmd(VGPU_OP_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, k, a, b, a, 8, exec));
    ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}});
    ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kOut, a, 32, 0}});
    EXPECT_EQ(floats(kOut, 8)[2], 6.0f);
    // An update from the graph brings its node back (c = a + b).
    const Done up = rig.call({.opcode = VGPU_OP_GRAPH_EXEC_UPDATE, .args = {exec, g}});
    ASSERT_EQ(up.status, VGPU_SUCCESS);
    EXPECT_EQ(up.r0, 0u);
    ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}});
    ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kOut, c, 32, 0}});
    EXPECT_EQ(floats(kOut, 8)[2], 9.0f); // a[2] = 6 now, b[2] = 3
    // Another shape: refused, with the result saying why.
    ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const Done changed = rig.call({.opcode = VGPU_OP_GRAPH_EXEC_UPDATE, .args = {exec, g}});
    EXPECT_EQ(changed.status, VGPU_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    EXPECT_EQ(changed.r0, 2u); // CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED
    // The graph's own node, then a new instance.
    ok(kernel_cmd(VGPU_OP_GRAPH_KERNEL_NODE_SET_PARAMS, k, b, b, c, 8));
    const uint64_t exec2 = ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec2, 0}});
    ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kOut, c, 32, 0}});
    EXPECT_EQ(floats(kOut, 8)[2], 6.0f);
}

TEST_F(VgpuGraph, CaptureRecordsTheStreamsWorkAndReplaysIt) {
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    const uint64_t s2 = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    const uint64_t ev = ok({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    put_floats(kIn, 2.0f, 32);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}}).status, VGPU_SUCCESS);
    const Done info = rig.call({.opcode = VGPU_OP_STREAM_CAPTURE_INFO, .args = {s}});
    EXPECT_EQ(info.r0, 1u); // ACTIVE
    EXPECT_NE(info.r1, 0u);
    const uint16_t async = VGPU_CMD_FLAG_ASYNC;
    ok({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {a, kIn, 128, s}, .flags = async});
    // s2 joins through an event recorded in the capture.
    ok({.opcode = VGPU_OP_EVENT_RECORD, .args = {ev, s}, .flags = async});
    ok({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {s2, ev, 0}, .flags = async});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_CAPTURE_INFO, .args = {s2}}).r1, info.r1);
    ok({.opcode = VGPU_OP_MEMSET_D32, .args = {b, 0x40000000 /* 2.0f */, 32, s2}, .flags = async});
    ok({.opcode = VGPU_OP_EVENT_RECORD, .args = {ev, s2}, .flags = async});
    ok({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {s, ev, 0}, .flags = async});
    Cmd launch = kernel_cmd(VGPU_OP_LAUNCH_KERNEL_PACKED, s, a, b, c, 32);
    launch.payload.erase(launch.payload.begin(), launch.payload.begin() + 8);
    launch.flags = async;
    ok(launch);
    ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kOut, c, 128, s}, .flags = async});
    EXPECT_EQ(floats(kOut, 32)[0], 0.0f); // recorded, not run
    // Scatter-gather copies stage through memory that would not outlive the call.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {a, kIn, 1, s, VGPU_SG_COALESCE, 0}}).status,
              VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s2}}).status, VGPU_ERROR_STREAM_CAPTURE_UNMATCHED);
    const uint64_t g = ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_CAPTURE_INFO, .args = {s2}}).r0, 0u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {g, 0}}).r0, 4u); // copy, memset, kernel, copy
    const uint64_t exec = ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, s}});
    EXPECT_EQ(floats(kOut, 32)[3], 7.0f); // (2 + 3) + 2
}

TEST_F(VgpuGraph, SynchronizingACaptureInvalidatesIt) {
    const uint64_t s = ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {0, 0}}).status,
              VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 3}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}}).status, VGPU_ERROR_ILLEGAL_STATE);
    ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}}).status, VGPU_ERROR_ILLEGAL_STATE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s}}).status,
              VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_CAPTURE_INFO, .args = {s}}).r0, 2u); // INVALIDATED
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {a, 1, 16, s}, .flags = VGPU_CMD_FLAG_ASYNC}).status,
              VGPU_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}}).status,
              VGPU_ERROR_STREAM_CAPTURE_INVALIDATED);
    // The stream works as before.
    ok({.opcode = VGPU_OP_MEMSET_D8, .args = {a, 1, 16, s}});
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
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g2, 1}}).status, VGPU_ERROR_INVALID_VALUE);
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
    EXPECT_EQ(rig.call(kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g2, a, b, c, 8, 0, 24)).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call(kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g2, a, b, c, 2048)).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call(kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g2, a, b, c, 8, n)).status, VGPU_ERROR_INVALID_VALUE);
    Cmd short_payload = kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g2, a, b, c, 8);
    short_payload.payload_len = 4;
    EXPECT_EQ(rig.call(short_payload).status, VGPU_ERROR_INVALID_VALUE);
    short_payload.payload_len = 20; // the exec field and part of the buffer
    EXPECT_EQ(rig.call(short_payload).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call(kernel_cmd(VGPU_OP_GRAPH_KERNEL_NODE_SET_PARAMS, n, a, b, c, 8)).status,
              VGPU_ERROR_INVALID_VALUE); // an empty node has no kernel
    EXPECT_EQ(rig.call(kernel_cmd(VGPU_OP_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, n, a, b, c, 8, g)).status,
              VGPU_ERROR_INVALID_HANDLE); // a graph is not an exec
    // A destroyed node's handle is stale; its edges went with it.
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY_NODE, .args = {m}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY_NODE, .args = {m}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_NE(rig.call({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}}).r0, 0u);
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

} // namespace
} // namespace kvmgpu::vgpu::test
