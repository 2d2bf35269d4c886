#include "tests/support/graph_cases.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kvmgpu::vgpu::test {

GraphVm::GraphVm(VgpuRig& r, std::span<const uint8_t> image) : rig(r) {
    rig.module_with("vector_add", &add, image);
    a = rig.alloc(4096), b = rig.alloc(4096), c = rig.alloc(4096);
}

uint64_t GraphVm::ok(const Cmd& cmd) {
    const Done d = rig.call(cmd);
    EXPECT_EQ(d.status, VGPU_SUCCESS) << "opcode " << cmd.opcode;
    return d.r0;
}
uint64_t GraphVm::graph() { return ok({.opcode = VGPU_OP_GRAPH_CREATE, .args = {0}}); }
Done GraphVm::memcpy_node(uint64_t g, uint64_t dir, uint64_t dst, uint64_t src, uint64_t n) {
    return rig.call({.opcode = VGPU_OP_GRAPH_ADD_MEMCPY_NODE, .args = {g, dir, dst, src, n}});
}
Done GraphVm::memset_node(uint64_t g, uint64_t dptr, uint64_t value, uint64_t element, uint64_t count) {
    return rig.call({.opcode = VGPU_OP_GRAPH_ADD_MEMSET_NODE, .args = {g, dptr, value, element, count}});
}
Cmd GraphVm::kernel_cmd(uint16_t op, uint64_t target, uint64_t x, uint64_t y, uint64_t out, uint32_t n, uint64_t exec,
                  uint32_t bytes) {
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
Done GraphVm::edge(uint64_t g, uint64_t from, uint64_t to, uint64_t remove) {
    std::vector<uint8_t> p(16);
    std::memcpy(p.data(), &from, 8);
    std::memcpy(p.data() + 8, &to, 8);
    return rig.call({.opcode = VGPU_OP_GRAPH_DEPENDENCIES, .args = {g, 1, remove}, .payload = p});
}
Done GraphVm::next_depends_on(uint64_t g, const std::vector<uint64_t>& nodes, uint64_t append) {
    std::vector<uint8_t> p(nodes.size() * 8);
    if (!nodes.empty()) std::memcpy(p.data(), nodes.data(), p.size());
    return rig.call({.opcode = VGPU_OP_GRAPH_NEXT_NODE_DEPENDENCIES, .args = {g, nodes.size(), append}, .payload = p});
}
std::vector<std::pair<uint64_t, uint64_t>> GraphVm::pairs(uint64_t handle, uint64_t kind) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    uint64_t total = 1;
    while (out.size() < total) {
        const Done d = rig.call({.opcode = VGPU_OP_GRAPH_EDGES, .args = {handle, out.size(), kind}});
        EXPECT_EQ(d.status, VGPU_SUCCESS);
        if (d.status != VGPU_SUCCESS) break;
        total = d.r0;
        for (size_t i = 0; i < VGPU_GRAPH_EDGES_PER_CALL && out.size() < total; ++i) {
            uint64_t ends[2];
            std::memcpy(ends, d.payload.data() + i * 16, sizeof ends);
            out.emplace_back(ends[0], ends[1]);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}
uint64_t GraphVm::node_type(uint64_t node) { return ok({.opcode = VGPU_OP_GRAPH_NODE_GET_TYPE, .args = {node}}); }
std::vector<float> GraphVm::floats(uint64_t gpa, size_t n) {
    std::vector<float> v(n);
    rig.get(gpa, v.data(), n * sizeof(float));
    return v;
}
void GraphVm::put_floats(uint64_t gpa, float first, size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = first + static_cast<float>(i);
    rig.put(gpa, v.data(), n * sizeof(float));
}

void graph_runs_in_dependency_order(GraphVm& v) {
    VgpuRig& rig = v.rig;
    const uint64_t a = v.a, b = v.b, c = v.c;
    const uint64_t g = v.graph();
    // Added last-first: the edges, not the order added, decide.
    const uint64_t out = v.memcpy_node(g, VGPU_OP_MEMCPY_DTOH, kGraphOut, c, 64 * 4).r0;
    const uint64_t sum = v.ok(v.kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g, a, b, c, 64));
    const uint64_t in_a = v.memcpy_node(g, VGPU_OP_MEMCPY_HTOD, a, kGraphIn, 64 * 4).r0;
    const uint64_t set_b = v.memset_node(g, b, 0x3f800000 /* 1.0f */, 4, 64).r0;
    ASSERT_EQ(v.edge(g, in_a, sum).status, VGPU_SUCCESS);
    ASSERT_EQ(v.edge(g, set_b, sum).status, VGPU_SUCCESS);
    ASSERT_EQ(v.edge(g, sum, out).status, VGPU_SUCCESS);
    const Done nodes = rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {g, 0}});
    ASSERT_EQ(nodes.r0, 4u);
    uint64_t first;
    std::memcpy(&first, nodes.payload.data(), 8);
    EXPECT_EQ(first, out); // the handles the adds gave

    const uint64_t exec = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    v.put_floats(kGraphIn, 10.0f, 64);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(v.floats(kGraphOut, 64)[5], 16.0f);
    // A launch reads the guest RAM the node names at that time.
    v.put_floats(kGraphIn, 100.0f, 64);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}, .flags = VGPU_CMD_FLAG_ASYNC}).status,
              VGPU_SUCCESS);
    v.ok({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {0}});
    EXPECT_EQ(v.floats(kGraphOut, 64)[63], 164.0f);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_UPLOAD, .args = {exec, 0}}).status, VGPU_SUCCESS);
}

void kernel_node_params_in_graph_and_exec(GraphVm& v) {
    VgpuRig& rig = v.rig;
    const uint64_t a = v.a, b = v.b, c = v.c;
    const uint64_t g = v.graph();
    const uint64_t k = v.ok(v.kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g, a, b, c, 8));
    const uint64_t exec = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    v.put_floats(kGraphIn, 1.0f, 16);
    v.ok({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {a, kGraphIn, 64, 0}});
    v.ok({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {b, kGraphIn, 64, 0}});
    // The exec's node writes a now (a + b into a), the graph's still c.
    v.ok(v.kernel_cmd(VGPU_OP_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, k, a, b, a, 8, exec));
    v.ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}});
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, a, 32, 0}});
    EXPECT_EQ(v.floats(kGraphOut, 8)[2], 6.0f);
    // An update from the graph brings its node back (c = a + b).
    const Done up = rig.call({.opcode = VGPU_OP_GRAPH_EXEC_UPDATE, .args = {exec, g}});
    ASSERT_EQ(up.status, VGPU_SUCCESS);
    EXPECT_EQ(up.r0, 0u);
    v.ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}});
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, c, 32, 0}});
    EXPECT_EQ(v.floats(kGraphOut, 8)[2], 9.0f); // a[2] = 6 now, b[2] = 3
    // Another shape: refused, with the result saying why.
    v.ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    const Done changed = rig.call({.opcode = VGPU_OP_GRAPH_EXEC_UPDATE, .args = {exec, g}});
    EXPECT_EQ(changed.status, VGPU_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    EXPECT_EQ(changed.r0, 2u); // CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED
    // The graph's own node, then a new instance.
    v.ok(v.kernel_cmd(VGPU_OP_GRAPH_KERNEL_NODE_SET_PARAMS, k, b, b, c, 8));
    const uint64_t exec2 = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    v.ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec2, 0}});
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, c, 32, 0}});
    EXPECT_EQ(v.floats(kGraphOut, 8)[2], 6.0f);
}

void capture_records_and_replays(GraphVm& v) {
    VgpuRig& rig = v.rig;
    const uint64_t a = v.a, b = v.b, c = v.c;
    const uint64_t s = v.ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    const uint64_t s2 = v.ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    const uint64_t ev = v.ok({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    v.put_floats(kGraphIn, 2.0f, 32);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}}).status, VGPU_SUCCESS);
    const Done info = rig.call({.opcode = VGPU_OP_STREAM_CAPTURE_INFO, .args = {s}});
    EXPECT_EQ(info.r0, 1u); // ACTIVE
    EXPECT_NE(info.r1, 0u);
    const uint16_t async = VGPU_CMD_FLAG_ASYNC;
    v.ok({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {a, kGraphIn, 128, s}, .flags = async});
    // s2 joins through an event recorded in the capture.
    v.ok({.opcode = VGPU_OP_EVENT_RECORD, .args = {ev, s}, .flags = async});
    v.ok({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {s2, ev, 0}, .flags = async});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_CAPTURE_INFO, .args = {s2}}).r1, info.r1);
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {b, 0x40000000 /* 2.0f */, 32, s2}, .flags = async});
    v.ok({.opcode = VGPU_OP_EVENT_RECORD, .args = {ev, s2}, .flags = async});
    v.ok({.opcode = VGPU_OP_STREAM_WAIT_EVENT, .args = {s, ev, 0}, .flags = async});
    Cmd launch = v.kernel_cmd(VGPU_OP_LAUNCH_KERNEL_PACKED, s, a, b, c, 32);
    launch.payload.erase(launch.payload.begin(), launch.payload.begin() + 8);
    launch.flags = async;
    v.ok(launch);
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, c, 128, s}, .flags = async});
    EXPECT_EQ(v.floats(kGraphOut, 32)[0], 0.0f); // recorded, not run
    // Scatter-gather copies stage through memory that would not outlive the call.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD_SG, .args = {a, kGraphIn, 1, s, VGPU_SG_COALESCE, 0}}).status,
              VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    const uint64_t g = v.ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_CAPTURE_INFO, .args = {s2}}).r0, 0u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {g, 0}}).r0, 4u); // copy, memset, kernel, copy
    const uint64_t exec = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    v.ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, s}});
    EXPECT_EQ(v.floats(kGraphOut, 32)[3], 7.0f); // (2 + 3) + 2
}

void synchronizing_a_capture_invalidates_it(GraphVm& v) {
    VgpuRig& rig = v.rig;
    const uint64_t a = v.a;
    const uint64_t s = v.ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {0, 0}}).status,
              VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 3}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}}).status, VGPU_ERROR_ILLEGAL_STATE);
    v.ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}}).status, VGPU_ERROR_ILLEGAL_STATE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s}}).status,
              VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_CAPTURE_INFO, .args = {s}}).r0, 2u); // INVALIDATED
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMSET_D8, .args = {a, 1, 16, s}, .flags = VGPU_CMD_FLAG_ASYNC}).status,
              VGPU_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}}).status,
              VGPU_ERROR_STREAM_CAPTURE_INVALIDATED);
    // The stream works as before.
    v.ok({.opcode = VGPU_OP_MEMSET_D8, .args = {a, 1, 16, s}});
}

void graph_shape_and_clone(GraphVm& v) {
    VgpuRig& rig = v.rig;
    const uint64_t a = v.a, b = v.b, c = v.c;
    const uint64_t g = v.graph();
    const uint64_t in_a = v.memcpy_node(g, VGPU_OP_MEMCPY_HTOD, a, kGraphIn, 64 * 4).r0;
    const uint64_t set_b = v.memset_node(g, b, 0x3f800000 /* 1.0f */, 4, 64).r0;
    const uint64_t sum = v.ok(v.kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g, a, b, c, 64));
    const uint64_t out = v.memcpy_node(g, VGPU_OP_MEMCPY_DTOH, kGraphOut, c, 64 * 4).r0;
    const uint64_t lone = v.ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    ASSERT_EQ(v.edge(g, in_a, sum).status, VGPU_SUCCESS);
    ASSERT_EQ(v.edge(g, set_b, sum).status, VGPU_SUCCESS);
    ASSERT_EQ(v.edge(g, sum, out).status, VGPU_SUCCESS);
    using Pairs = std::vector<std::pair<uint64_t, uint64_t>>;
    auto sorted = [](Pairs p) {
        std::sort(p.begin(), p.end());
        return p;
    };
    EXPECT_EQ(v.pairs(g, VGPU_GRAPH_EDGES_ALL), sorted({{in_a, sum}, {set_b, sum}, {sum, out}}));
    EXPECT_EQ(v.pairs(g, VGPU_GRAPH_EDGES_ROOTS), sorted({{0, in_a}, {0, set_b}, {0, lone}}));
    EXPECT_EQ(v.pairs(sum, VGPU_GRAPH_EDGES_INTO), sorted({{in_a, sum}, {set_b, sum}}));
    EXPECT_EQ(v.pairs(sum, VGPU_GRAPH_EDGES_FROM), Pairs({{sum, out}}));
    EXPECT_EQ(v.pairs(in_a, VGPU_GRAPH_EDGES_INTO), Pairs{});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_EDGES, .args = {g, 4, VGPU_GRAPH_EDGES_ALL}}).status,
              VGPU_ERROR_INVALID_VALUE); // first past the last
    EXPECT_EQ(v.node_type(sum), 0u);    // CU_GRAPH_NODE_TYPE_KERNEL
    EXPECT_EQ(v.node_type(in_a), 1u);   // _MEMCPY
    EXPECT_EQ(v.node_type(set_b), 2u);  // _MEMSET
    EXPECT_EQ(v.node_type(lone), 5u);   // _EMPTY

    // The clone: its own nodes, the same edges between their copies.
    const uint64_t copy = v.ok({.opcode = VGPU_OP_GRAPH_CLONE, .args = {g}});
    ASSERT_NE(copy, g);
    auto find = [&](uint64_t n) { return v.ok({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {copy, n}}); };
    const uint64_t in_a2 = find(in_a), set_b2 = find(set_b), sum2 = find(sum), out2 = find(out);
    EXPECT_NE(sum2, sum);
    EXPECT_EQ(find(sum), sum2); // the same handle each time
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {copy, 0}}).r0, 5u);
    EXPECT_EQ(v.pairs(copy, VGPU_GRAPH_EDGES_ALL), sorted({{in_a2, sum2}, {set_b2, sum2}, {sum2, out2}}));
    EXPECT_EQ(v.node_type(sum2), 0u);
    // A node of the original added later, a node of the clone, the original asked: no copy.
    const uint64_t late = v.ok({.opcode = VGPU_OP_GRAPH_ADD_EMPTY_NODE, .args = {g}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {copy, late}}).status,
              VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {copy, sum2}}).status,
              VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_FIND_IN_CLONE, .args = {g, sum}}).status,
              VGPU_ERROR_INVALID_VALUE);
    // The original goes; the clone runs as it would have.
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g}});
    const uint64_t exec = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {copy, 0}});
    v.put_floats(kGraphIn, 10.0f, 64);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(v.floats(kGraphOut, 64)[5], 16.0f);
    // A destroyed copy is not found again.
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY_NODE, .args = {out2}});
    EXPECT_EQ(v.pairs(sum2, VGPU_GRAPH_EDGES_FROM), Pairs{});
}

void stream_attributes_round_trip(GraphVm& v) {
    VgpuRig& rig = v.rig;
    const uint64_t s = v.ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    auto get = [&](uint64_t stream, uint64_t attr) {
        const Done d = rig.call({.opcode = VGPU_OP_STREAM_GET_ATTRIBUTE, .args = {stream, attr}});
        EXPECT_EQ(d.status, VGPU_SUCCESS) << "attribute " << attr;
        vgpu_stream_attr_value out{};
        std::memcpy(&out, d.payload.data(), sizeof out);
        return out;
    };
    auto set = [&](uint64_t stream, uint64_t attr, const vgpu_stream_attr_value& value) {
        vgpu_args_stream_attribute a{stream, attr, value};
        Cmd cmd{.opcode = VGPU_OP_STREAM_SET_ATTRIBUTE, .args = std::vector<uint64_t>(6)};
        std::memcpy(cmd.args.data(), &a, sizeof a);
        return rig.call(cmd).status;
    };
    // A stream never set (assumed as the driver's: no window, AUTO, DEFAULT, map {0, 1}).
    EXPECT_EQ(get(s, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW).bytes, 0u);
    // Driver 580 answers ~0u (no policy set) where the host backend answers AUTO.
    const uint64_t policy = get(s, VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY).value;
    EXPECT_TRUE(policy == 1u || policy == 0xffffffffu) << policy;
    EXPECT_EQ(get(s, VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN).value, 0u);
    // A window over the first KiB of a: read back as set.
    const float ratio = 0.5f;
    vgpu_stream_attr_value w{.base = v.a, .bytes = 1024, .hit_ratio_bits = 0, .hit_prop = 2, .miss_prop = 1, .value = 0};
    std::memcpy(&w.hit_ratio_bits, &ratio, sizeof ratio);
    ASSERT_EQ(set(s, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW, w), VGPU_SUCCESS);
    const vgpu_stream_attr_value back = get(s, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW);
    EXPECT_EQ(back.base, v.a);
    EXPECT_EQ(back.bytes, 1024u);
    EXPECT_EQ(back.hit_prop, 2u);
    EXPECT_EQ(back.miss_prop, 1u);
    float back_ratio;
    std::memcpy(&back_ratio, &back.hit_ratio_bits, sizeof back_ratio);
    EXPECT_NEAR(back_ratio, 0.5f, 1e-6);
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY, {.value = 4}), VGPU_SUCCESS); // BLOCKING_SYNC
    EXPECT_EQ(get(s, VGPU_STREAM_ATTR_SYNCHRONIZATION_POLICY).value, 4u);
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN, {.value = 1}), VGPU_SUCCESS); // REMOTE
    EXPECT_EQ(get(s, VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN).value, 1u);
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP, {.value = 1 | 0 << 8}), VGPU_SUCCESS);
    EXPECT_EQ(get(s, VGPU_STREAM_ATTR_MEM_SYNC_DOMAIN_MAP).value, 1u);
    // Kernels still run on the stream.
    v.put_floats(kGraphIn, 2.0f, 8);
    v.ok({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {v.a, kGraphIn, 32, s}});
    v.ok({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {v.b, kGraphIn, 32, s}});
    Cmd launch = v.kernel_cmd(VGPU_OP_LAUNCH_KERNEL_PACKED, s, v.a, v.b, v.c, 8);
    launch.payload.erase(launch.payload.begin(), launch.payload.begin() + 8);
    v.ok(launch);
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, v.c, 32, s}});
    v.ok({.opcode = VGPU_OP_STREAM_SYNCHRONIZE, .args = {s}});
    EXPECT_EQ(v.floats(kGraphOut, 8)[3], 10.0f); // (2 + 3) * 2
    // A window past the allocation, or over memory that is not the VM's: refused.
    vgpu_stream_attr_value outside = w;
    outside.bytes = 8192;
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW, outside), VGPU_ERROR_INVALID_VALUE);
    outside = w;
    outside.base = kGraphIn; // guest RAM's address, no device memory of the VM
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW, outside), VGPU_ERROR_INVALID_VALUE);
    // Clearing the window: base and bytes 0.
    EXPECT_EQ(set(s, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW, {}), VGPU_SUCCESS);
    EXPECT_EQ(get(s, VGPU_STREAM_ATTR_ACCESS_POLICY_WINDOW).bytes, 0u);
}

void event_nodes_and_switched_off_nodes(GraphVm& v) {
    VgpuRig& rig = v.rig;
    const uint64_t c = v.c;
    const uint64_t ev1 = v.ok({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    const uint64_t ev2 = v.ok({.opcode = VGPU_OP_EVENT_CREATE, .args = {0}});
    v.ok({.opcode = VGPU_OP_EVENT_RECORD, .args = {ev2, 0}}); // what the wait node waits for
    const uint64_t g = v.graph();
    const uint64_t wait = v.ok({.opcode = VGPU_OP_GRAPH_ADD_EVENT_NODE, .args = {g, ev2, 1}});
    const uint64_t set = v.memset_node(g, c, 0x40400000 /* 3.0f */, 4, 16).r0;
    const uint64_t out = v.memcpy_node(g, VGPU_OP_MEMCPY_DTOH, kGraphOut, c, 16 * 4).r0;
    const uint64_t record = v.ok({.opcode = VGPU_OP_GRAPH_ADD_EVENT_NODE, .args = {g, ev1, 0}});
    ASSERT_EQ(v.edge(g, wait, set).status, VGPU_SUCCESS);
    ASSERT_EQ(v.edge(g, set, out).status, VGPU_SUCCESS);
    ASSERT_EQ(v.edge(g, out, record).status, VGPU_SUCCESS);
    EXPECT_EQ(v.node_type(wait), 6u);   // CU_GRAPH_NODE_TYPE_WAIT_EVENT
    EXPECT_EQ(v.node_type(record), 7u); // _EVENT_RECORD
    auto event_of = [&](uint64_t node, uint64_t is_wait) {
        return rig.call({.opcode = VGPU_OP_GRAPH_EVENT_NODE_GET_EVENT, .args = {node, is_wait}});
    };
    EXPECT_EQ(event_of(record, 0).r0, ev1);
    EXPECT_EQ(event_of(wait, 1).r0, ev2);
    EXPECT_EQ(event_of(record, 1).status, VGPU_ERROR_INVALID_VALUE); // the other kind
    EXPECT_EQ(event_of(set, 0).status, VGPU_ERROR_INVALID_VALUE);
    // The graph's node changed, then changed back.
    v.ok({.opcode = VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, .args = {0, record, ev2, 0}});
    EXPECT_EQ(event_of(record, 0).r0, ev2);
    v.ok({.opcode = VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, .args = {0, record, ev1, 0}});

    const uint64_t exec = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    const uint64_t exec_auto_free = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 1}});
    EXPECT_EQ(v.ok({.opcode = VGPU_OP_GRAPH_EXEC_GET_FLAGS, .args = {exec}}), 0u);
    EXPECT_EQ(v.ok({.opcode = VGPU_OP_GRAPH_EXEC_GET_FLAGS, .args = {exec_auto_free}}), 1u);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(v.floats(kGraphOut, 16)[15], 3.0f);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_QUERY, .args = {ev1}}).status, VGPU_SUCCESS);

    // Switched off in the exec: c keeps what it was given since.
    auto enabled = [&](uint64_t node) { return v.ok({.opcode = VGPU_OP_GRAPH_NODE_GET_ENABLED, .args = {exec, node}}); };
    EXPECT_EQ(enabled(set), 1u);
    v.ok({.opcode = VGPU_OP_GRAPH_NODE_SET_ENABLED, .args = {exec, set, 0}});
    EXPECT_EQ(enabled(set), 0u);
    EXPECT_EQ(v.ok({.opcode = VGPU_OP_GRAPH_NODE_GET_ENABLED, .args = {exec_auto_free, set}}), 1u); // one exec's only
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {c, 0x40a00000 /* 5.0f */, 16, 0}});
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(v.floats(kGraphOut, 16)[15], 5.0f);
    v.ok({.opcode = VGPU_OP_GRAPH_NODE_SET_ENABLED, .args = {exec, set, 1}});
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(v.floats(kGraphOut, 16)[15], 3.0f);
    // Event nodes are not switched off.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_NODE_SET_ENABLED, .args = {exec, record, 0}}).status,
              VGPU_ERROR_INVALID_VALUE);

    // The exec's copy records ev2; the graph's node still names ev1.
    v.ok({.opcode = VGPU_OP_GRAPH_EVENT_NODE_SET_EVENT, .args = {exec, record, ev2, 0}});
    EXPECT_EQ(event_of(record, 0).r0, ev1);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_QUERY, .args = {ev2}}).status, VGPU_SUCCESS);

    // ev1 destroyed while nodes name it: gone for the guest, still there for the launch.
    v.ok({.opcode = VGPU_OP_EVENT_DESTROY, .args = {ev1}});
    EXPECT_EQ(event_of(record, 0).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_EVENT_QUERY, .args = {ev1}}).status, VGPU_ERROR_INVALID_HANDLE);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec_auto_free, 0}}).status, VGPU_SUCCESS);
    v.ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec_auto_free}});
    v.ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec}});
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g}});
}

namespace {
uint64_t graph_memory_now(VgpuRig& rig) {
    const Done d = rig.call({.opcode = VGPU_OP_GRAPH_MEM_ATTRIBUTE, .args = {0, 0, 0, 0}}); // USED_MEM_CURRENT
    EXPECT_EQ(d.status, VGPU_SUCCESS);
    return d.r0;
}
} // namespace

void graph_memory_nodes(GraphVm& v) {
    VgpuRig& rig = v.rig;
    const uint64_t b = v.b, c = v.c;
    const uint16_t async = VGPU_CMD_FLAG_ASYNC;
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {b, 0x3f800000 /* 1.0f */, 32, 0}});
    EXPECT_EQ(graph_memory_now(rig), 0u);

    // alloc -> memset 2 -> c = a + b -> copy c out; the kernel -> free.
    const uint64_t g = v.graph();
    const Done alloc = rig.call({.opcode = VGPU_OP_GRAPH_ADD_MEM_ALLOC_NODE, .args = {g, 4096}});
    ASSERT_EQ(alloc.status, VGPU_SUCCESS);
    const uint64_t a = alloc.r1;
    EXPECT_NE(a, 0u);
    EXPECT_EQ(graph_memory_now(rig), 4096u);
    // Each node made with its dependencies.
    ASSERT_EQ(v.next_depends_on(g, {alloc.r0}).status, VGPU_SUCCESS);
    const uint64_t set = v.memset_node(g, a, 0x40000000 /* 2.0f */, 4, 32).r0;
    ASSERT_EQ(v.next_depends_on(g, {set}).status, VGPU_SUCCESS);
    const uint64_t sum = v.ok(v.kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, g, a, b, c, 32));
    ASSERT_EQ(v.next_depends_on(g, {sum}).status, VGPU_SUCCESS);
    const uint64_t out = v.memcpy_node(g, VGPU_OP_MEMCPY_DTOH, kGraphOut, c, 128).r0;
    ASSERT_EQ(v.next_depends_on(g, {sum}).status, VGPU_SUCCESS);
    const uint64_t release = v.ok({.opcode = VGPU_OP_GRAPH_ADD_MEM_FREE_NODE, .args = {g, a}});
    const std::vector<std::pair<uint64_t, uint64_t>> made{{alloc.r0, set}, {set, sum}, {sum, out}, {sum, release}};
    for (const auto& e : made) EXPECT_TRUE(std::ranges::count(v.pairs(g, VGPU_GRAPH_EDGES_ALL), e)) << e.first << "->" << e.second;
    EXPECT_EQ(v.node_type(alloc.r0), 10u); // CU_GRAPH_NODE_TYPE_MEM_ALLOC
    EXPECT_EQ(v.node_type(release), 11u);  // CU_GRAPH_NODE_TYPE_MEM_FREE
    const uint64_t exec = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g}});
    EXPECT_EQ(graph_memory_now(rig), 4096u); // the exec holds it
    for (int launch = 0; launch < 2; ++launch) {
        v.put_floats(kGraphOut, 0.0f, 1);
        v.ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}});
        EXPECT_EQ(v.floats(kGraphOut, 32)[31], 3.0f);
    }
    v.ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec}});
    EXPECT_EQ(graph_memory_now(rig), 0u);
    EXPECT_GE(rig.call({.opcode = VGPU_OP_GRAPH_MEM_ATTRIBUTE, .args = {0, 1, 0, 0}}).r0, 4096u); // USED_MEM_HIGH

    // Hostile values.
    const uint64_t g2 = v.graph();
    const uint64_t s = v.ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    auto status = [&](uint16_t op, std::vector<uint64_t> args) { return rig.call({.opcode = op, .args = args}).status; };
    for (uint64_t bad : std::vector<uint64_t>{0, b, b + 64, a, ~0ull}) { // a: released with its graph
        EXPECT_EQ(status(VGPU_OP_GRAPH_ADD_MEM_FREE_NODE, {g2, bad}), VGPU_ERROR_INVALID_VALUE) << bad;
        EXPECT_EQ(status(VGPU_OP_MEM_FREE_GRAPH_ALLOCATION, {s, bad}), VGPU_ERROR_INVALID_VALUE) << bad;
    }
    EXPECT_EQ(status(VGPU_OP_GRAPH_ADD_MEM_ALLOC_NODE, {g2, 0}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_ADD_MEM_ALLOC_NODE, {g2, 1ull << 62}), VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(status(VGPU_OP_GRAPH_ADD_MEM_ALLOC_NODE, {g2 + 100, 64}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status(VGPU_OP_MEM_ALLOC_CAPTURED, {s, 64}), VGPU_ERROR_INVALID_VALUE); // not capturing
    EXPECT_EQ(status(VGPU_OP_MEM_ALLOC_CAPTURED, {0, 64}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status(VGPU_OP_MEM_ALLOC_CAPTURED, {s + 100, 64}), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_MEM_ATTRIBUTE, {99, 0, 0, 0}), VGPU_ERROR_INVALID_DEVICE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_MEM_ATTRIBUTE, {0, 4, 0, 0}), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status(VGPU_OP_GRAPH_MEM_ATTRIBUTE, {0, 0, 1, 0}), VGPU_ERROR_INVALID_VALUE); // a current figure
    EXPECT_EQ(status(VGPU_OP_GRAPH_MEM_ATTRIBUTE, {0, 1, 1, 5}), VGPU_ERROR_INVALID_VALUE); // not 0
    EXPECT_EQ(status(VGPU_OP_GRAPH_MEM_ATTRIBUTE, {0, 3, 1, 0}), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_MEM_ATTRIBUTE, .args = {0, 3, 0, 0}}).r0, 0u); // reset to what is held

    // Captured: cuMemAllocAsync and cuMemFreeAsync become the graph's nodes.
    v.ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}});
    const uint64_t d = v.ok({.opcode = VGPU_OP_MEM_ALLOC_CAPTURED, .args = {s, 4096}});
    EXPECT_EQ(graph_memory_now(rig), 4096u);
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {d, 0x40000000, 32, s}, .flags = async});
    Cmd launch = v.kernel_cmd(VGPU_OP_LAUNCH_KERNEL_PACKED, s, d, b, c, 32);
    launch.payload.erase(launch.payload.begin(), launch.payload.begin() + 8);
    launch.flags = async;
    v.ok(launch);
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, c, 128, s}, .flags = async});
    v.ok({.opcode = VGPU_OP_MEM_FREE_GRAPH_ALLOCATION, .args = {s, d}, .flags = async});
    const uint64_t g3 = v.ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {g3, 0}}).r0, 5u);
    const uint64_t exec3 = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g3, 1 /* AUTO_FREE_ON_LAUNCH */}});
    for (int launch_no = 0; launch_no < 2; ++launch_no) {
        v.put_floats(kGraphOut, 0.0f, 1);
        v.ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec3, s}});
        EXPECT_EQ(v.floats(kGraphOut, 32)[0], 3.0f);
    }
    v.ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec3}});
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g3}});
    EXPECT_EQ(graph_memory_now(rig), 0u);

    // An invalidated capture gives its allocation back.
    v.ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}});
    v.ok({.opcode = VGPU_OP_MEM_ALLOC_CAPTURED, .args = {s, 4096}});
    EXPECT_EQ(status(VGPU_OP_STREAM_SYNCHRONIZE, {s}), VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_EQ(status(VGPU_OP_STREAM_END_CAPTURE, {s}), VGPU_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT_EQ(graph_memory_now(rig), 0u);

    // A launch leaves an allocation live: read, freed, made again, freed on a stream.
    v.ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 0}});
    const uint64_t live = v.ok({.opcode = VGPU_OP_MEM_ALLOC_CAPTURED, .args = {s, 4096}});
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {live, 0x40e00000 /* 7.0f */, 32, s}, .flags = async});
    const uint64_t g4 = v.ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}});
    const uint64_t exec4 = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g4, 0}});
    v.ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec4, s}});
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, live, 128, 0}});
    EXPECT_EQ(v.floats(kGraphOut, 32)[31], 7.0f);
    v.ok({.opcode = VGPU_OP_MEM_FREE, .args = {live}});
    EXPECT_EQ(graph_memory_now(rig), 4096u); // the address stays the graph's
    v.ok({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec4, s}});
    v.ok({.opcode = VGPU_OP_MEM_FREE_GRAPH_ALLOCATION, .args = {s, live}});
    v.ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec4}});
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g4}});
    EXPECT_EQ(graph_memory_now(rig), 0u);
}

namespace {
uint64_t handle_at(const Done& d, size_t i) {
    uint64_t h = 0;
    if (d.payload.size() >= (i + 1) * 8) std::memcpy(&h, d.payload.data() + i * 8, 8);
    return h;
}
} // namespace

void conditional_nodes_and_capture_graphs(GraphVm& v) {
    VgpuRig& rig = v.rig;
    const uint64_t g = v.graph(), other = v.graph();
    auto conditional = [&](uint64_t graph, uint64_t value) {
        return v.ok({.opcode = VGPU_OP_GRAPH_CONDITIONAL_CREATE, .args = {graph, value, 1 /* assign default */}});
    };
    auto node = [&](uint64_t graph, uint64_t cond, uint64_t type, uint64_t size) {
        return rig.call({.opcode = VGPU_OP_GRAPH_ADD_CONDITIONAL_NODE, .args = {graph, cond, type, size}});
    };
    const uint64_t yes = conditional(g, 1), no = conditional(g, 0), two = conditional(g, 2);
    // The driver's conditional handles are values it may give each graph
    // alike: only one that is none of g's can be told apart.
    const uint64_t foreign_cond = conditional(other, 1);
    if (foreign_cond != yes && foreign_cond != no && foreign_cond != two) {
        EXPECT_EQ(node(g, foreign_cond, 0, 1).status, VGPU_ERROR_INVALID_VALUE) << "another graph's conditional";
    }
    EXPECT_EQ(node(g, yes, 0, 3).status, VGPU_ERROR_INVALID_VALUE) << "an IF with three bodies";
    EXPECT_EQ(node(g, yes, 7, 1).status, VGPU_ERROR_INVALID_VALUE) << "no such type";
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_CONDITIONAL_CREATE, .args = {g, 1ull << 32, 0}}).status,
              VGPU_ERROR_INVALID_VALUE);
    // a = 1.0 where IF(yes) runs its body; b = 2.0 from IF(no)'s else body; c = 3.0 from SWITCH(2)'s third.
    const Done if_yes = node(g, yes, 0, 1), if_no = node(g, no, 0, 2), sw = node(g, two, 2, 3);
    ASSERT_EQ(if_yes.status, VGPU_SUCCESS);
    ASSERT_EQ(if_no.status, VGPU_SUCCESS);
    ASSERT_EQ(sw.status, VGPU_SUCCESS);
    EXPECT_EQ(v.node_type(if_yes.r0), 13u); // CU_GRAPH_NODE_TYPE_CONDITIONAL
    for (uint64_t body : {handle_at(if_yes, 0), handle_at(if_no, 0), handle_at(if_no, 1), handle_at(sw, 0), handle_at(sw, 1)})
        ASSERT_NE(body, 0u);
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {v.a, 0, 16, 0}});
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {v.b, 0, 16, 0}});
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {v.c, 0, 16, 0}});
    // Bodies hold kernel nodes, out = h + h (the driver takes no memset
    // nodes in a conditional's body): h holds half of what each writes.
    auto halves = [&](uint32_t bits) {
        const uint64_t h = v.ok({.opcode = VGPU_OP_MEM_ALLOC, .args = {16 * 4}});
        v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {h, bits, 16, 0}});
        return h;
    };
    const uint64_t half_1 = halves(0x3f000000), half_2 = halves(0x3f800000), half_3 = halves(0x3fc00000),
                   half_6 = halves(0x40400000), half_7 = halves(0x40600000);
    auto in_body = [&](uint64_t body, uint64_t half, uint64_t out) {
        return rig.call(v.kernel_cmd(VGPU_OP_GRAPH_ADD_KERNEL_NODE, body, half, half, out, 16));
    };
    ASSERT_EQ(in_body(handle_at(if_yes, 0), half_1, v.a).status, VGPU_SUCCESS);
    ASSERT_EQ(in_body(handle_at(if_no, 0), half_7, v.b).status, VGPU_SUCCESS); // the IF's body, not run
    ASSERT_EQ(in_body(handle_at(if_no, 1), half_2, v.b).status, VGPU_SUCCESS);
    ASSERT_EQ(in_body(handle_at(sw, 0), half_7, v.c).status, VGPU_SUCCESS);
    ASSERT_EQ(in_body(handle_at(sw, 2), half_3, v.c).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {handle_at(sw, 1)}}).status, VGPU_ERROR_INVALID_VALUE)
        << "a body goes with its node";
    const uint64_t exec = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {g, 0}});
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}}).status, VGPU_SUCCESS);
    const uint64_t bytes = 16 * 4;
    for (auto [dptr, want] : {std::pair{v.a, 1.0f}, std::pair{v.b, 2.0f}, std::pair{v.c, 3.0f}}) {
        v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, dptr, bytes, 0}});
        EXPECT_EQ(v.floats(kGraphOut, 16)[15], want);
    }
    // The SWITCH node destroyed: its bodies' handles go with it.
    const uint64_t sw_body = handle_at(sw, 2);
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY_NODE, .args = {sw.r0}});
    EXPECT_EQ(in_body(sw_body, half_3, v.c).status, VGPU_ERROR_INVALID_HANDLE);
    v.ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec}});

    // A capture's graph, named while it runs: memset, then an IF node
    // added to it by hand, then the capture's dependencies set to that node.
    const uint64_t s = v.ok({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    v.ok({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE, .args = {s, 2 /* relaxed */}});
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {v.a, 0x40a00000 /* 5.0f */, 16, s}, .flags = VGPU_CMD_FLAG_ASYNC});
    const Done cg = rig.call({.opcode = VGPU_OP_STREAM_CAPTURE_GRAPH, .args = {s, 0}});
    ASSERT_EQ(cg.status, VGPU_SUCCESS);
    const uint64_t captured = cg.r0;
    ASSERT_EQ(cg.r1, 1u) << "the memset";
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {captured}}).status,
              VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED) << "the capture's while it runs";
    const uint64_t cond = conditional(captured, 1);
    const Done in_capture = node(captured, cond, 0, 1);
    ASSERT_EQ(in_capture.status, VGPU_SUCCESS);
    ASSERT_EQ(v.edge(captured, handle_at(cg, 0), in_capture.r0).status, VGPU_SUCCESS);
    ASSERT_EQ(in_body(handle_at(in_capture, 0), half_6, v.b).status, VGPU_SUCCESS);
    std::vector<uint8_t> dep(8);
    std::memcpy(dep.data(), &in_capture.r0, 8);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_UPDATE_CAPTURE_DEPENDENCIES, .args = {s, 1, 1}, .payload = dep}).status,
              VGPU_SUCCESS);
    std::vector<uint8_t> foreign(8);
    std::memcpy(foreign.data(), &if_yes.r0, 8);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_STREAM_UPDATE_CAPTURE_DEPENDENCIES, .args = {s, 1, 1}, .payload = foreign}).status,
              VGPU_ERROR_INVALID_VALUE) << "a node of another graph";
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {v.c, v.b, bytes, s}, .flags = VGPU_CMD_FLAG_ASYNC});
    EXPECT_EQ(v.ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}}), captured) << "the handle given while it ran";
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {v.c, 0, 16, 0}});
    const uint64_t exec2 = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {captured, 0}});
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec2, 0}}).status, VGPU_SUCCESS);
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, v.c, bytes, 0}});
    EXPECT_EQ(v.floats(kGraphOut, 16)[15], 6.0f) << "the copy ran after the conditional's body";

    // A capture into the guest's own graph (after one of its nodes): END_CAPTURE names it again.
    const uint64_t mine = v.graph();
    const uint64_t first = v.memset_node(mine, v.a, 0x41000000 /* 8.0f */, 4, 16).r0;
    std::memcpy(dep.data(), &first, 8);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH, .args = {s, mine, 2, 1}, .payload = dep}).status,
              VGPU_SUCCESS);
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOD, .args = {v.c, v.a, bytes, s}, .flags = VGPU_CMD_FLAG_ASYNC});
    EXPECT_EQ(v.ok({.opcode = VGPU_OP_STREAM_END_CAPTURE, .args = {s}}), mine);
    const uint64_t exec3 = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {mine, 0}});
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec3, 0}}).status, VGPU_SUCCESS);
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, v.c, bytes, 0}});
    EXPECT_EQ(v.floats(kGraphOut, 16)[15], 8.0f);

    // Graphs destroyed with conditional nodes: every body handle goes.
    v.ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec2}});
    v.ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec3}});
    const uint64_t body = handle_at(if_no, 1);
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {g}});
    EXPECT_EQ(v.memset_node(body, v.b, 0, 4, 16).status, VGPU_ERROR_INVALID_HANDLE);
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {captured}});
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {mine}});
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {other}});
    v.ok({.opcode = VGPU_OP_STREAM_DESTROY, .args = {s}});
}

void child_graph_nodes(GraphVm& v) {
    VgpuRig& rig = v.rig;
    const uint64_t child = v.graph(), parent = v.graph();
    ASSERT_EQ(v.memset_node(child, v.a, 0x41100000 /* 9.0f */, 4, 16).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_ADD_CHILD_GRAPH_NODE, .args = {parent, parent}}).status,
              VGPU_ERROR_INVALID_VALUE);
    const Done added = rig.call({.opcode = VGPU_OP_GRAPH_ADD_CHILD_GRAPH_NODE, .args = {parent, child}});
    ASSERT_EQ(added.status, VGPU_SUCCESS);
    const uint64_t node = added.r0, copy = added.r1;
    EXPECT_EQ(v.node_type(node), 4u); // CU_GRAPH_NODE_TYPE_GRAPH
    EXPECT_EQ(v.ok({.opcode = VGPU_OP_GRAPH_CHILD_GRAPH, .args = {node}}), copy);
    const uint64_t set = v.memset_node(parent, v.b, 0x3f800000, 4, 16).r0;
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_CHILD_GRAPH, .args = {set}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {copy}}).status, VGPU_ERROR_INVALID_VALUE);
    // Changed after the node was made: the node's copy keeps 9.0.
    ASSERT_EQ(v.memset_node(child, v.a, 0x40e00000 /* 7.0f */, 4, 16).status, VGPU_SUCCESS);
    v.ok({.opcode = VGPU_OP_MEMSET_D32, .args = {v.a, 0, 16, 0}});
    const uint64_t exec = v.ok({.opcode = VGPU_OP_GRAPH_INSTANTIATE, .args = {parent, 0}});
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_LAUNCH, .args = {exec, 0}}).status, VGPU_SUCCESS);
    v.ok({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kGraphOut, v.a, 16 * 4, 0}});
    EXPECT_EQ(v.floats(kGraphOut, 16)[15], 9.0f);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_GET_NODES, .args = {copy, 0}}).r0, 1u) << "the child's one node then";
    v.ok({.opcode = VGPU_OP_GRAPH_EXEC_DESTROY, .args = {exec}});
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {parent}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_GRAPH_CHILD_GRAPH, .args = {node}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(v.memset_node(copy, v.a, 0, 4, 16).status, VGPU_ERROR_INVALID_HANDLE) << "gone with its node's graph";
    v.ok({.opcode = VGPU_OP_GRAPH_DESTROY, .args = {child}});
}

} // namespace kvmgpu::vgpu::test
