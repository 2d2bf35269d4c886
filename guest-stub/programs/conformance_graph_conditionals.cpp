// conformance, continued: conditional and child graph nodes and the graph under a capture,
// through the Driver API as NVIDIA's graphConditionalNodes sample calls it:
// cuGraphConditionalHandleCreate, cuGraphAddNode with conditional
// parameters (IF with an else body, SWITCH), nodes added to the bodies,
// cuStreamGetCaptureInfo's graph and dependencies, a node added to the
// graph under capture, cuStreamUpdateCaptureDependencies, and
// cuStreamBeginCaptureToGraph. Conditionals keep their defaults here (no
// kernel sets one), which picks the body that runs.
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {

constexpr unsigned kN = 64;

float first_of(CUdeviceptr d)
{
    float v = -1;
    CU_CHECK(cuMemcpyDtoH(&v, d, sizeof v));
    return v;
}

CUgraphNode conditional_node(CUgraph g, CUgraphConditionalHandle h, CUgraphConditionalNodeType type, unsigned size,
                             CUgraph* bodies, const CUgraphNode* deps = nullptr, size_t n = 0)
{
    CUcontext ctx = nullptr;
    CU_CHECK(cuCtxGetCurrent(&ctx));
    CUgraphNodeParams p = {};
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = h;
    p.conditional.type = type;
    p.conditional.size = size;
    p.conditional.ctx = ctx;
    CUgraphNode node = nullptr;
    expect("cuGraphAddNode(conditional)", cuGraphAddNode(&node, g, deps, nullptr, n, &p), CUDA_SUCCESS);
    expect_true("the driver's array of bodies", p.conditional.phGraph_out != nullptr);
    for (unsigned i = 0; p.conditional.phGraph_out != nullptr && i < size; ++i)
        bodies[i] = p.conditional.phGraph_out[i];
    return node;
}

void set_node(CUgraph g, CUdeviceptr d, float v)
{
    CUDA_MEMSET_NODE_PARAMS m = {};
    m.dst = d;
    m.elementSize = 4;
    m.width = kN;
    m.height = 1;
    __builtin_memcpy(&m.value, &v, 4);
    CUcontext ctx = nullptr;
    CU_CHECK(cuCtxGetCurrent(&ctx));
    CUgraphNode n = nullptr;
    expect("cuGraphAddMemsetNode", cuGraphAddMemsetNode(&n, g, nullptr, 0, &m, ctx), CUDA_SUCCESS);
}

void no_op(void*) {}

// A body's node: d = h + h, h holding v / 2 (the driver takes no memset
// nodes in a conditional's body). The halves are freed at the end.
CUfunction g_add;
CUdeviceptr g_halves[16];
int g_half_count;

void set_in_body(CUgraph body, CUdeviceptr d, float v)
{
    CUdeviceptr half = 0;
    CU_CHECK(cuMemAlloc(&half, kN * 4));
    const float h = v / 2;
    unsigned bits;
    __builtin_memcpy(&bits, &h, 4);
    CU_CHECK(cuMemsetD32(half, bits, kN));
    if (g_half_count < 16)
        g_halves[g_half_count++] = half;
    unsigned n = kN;
    CUdeviceptr x = half, y = half, out = d;
    void* params[] = {&x, &y, &out, &n};
    CUDA_KERNEL_NODE_PARAMS kp = {g_add, 1, 1, 1, kN, 1, 1, 0, params, nullptr, nullptr, nullptr};
    CUgraphNode k = nullptr;
    expect("cuGraphAddKernelNode (a body's)", cuGraphAddKernelNode(&k, body, nullptr, 0, &kp), CUDA_SUCCESS);
}

void launch_once(CUgraph g)
{
    CUgraphExec e = nullptr;
    expect("cuGraphInstantiate (conditionals)", cuGraphInstantiateWithFlags(&e, g, 0), CUDA_SUCCESS);
    expect("cuGraphLaunch (conditionals)", cuGraphLaunch(e, nullptr), CUDA_SUCCESS);
    CU_CHECK(cuCtxSynchronize());
    CU_CHECK(cuGraphExecDestroy(e));
}

void explicit_conditionals(CUdeviceptr da, CUdeviceptr db)
{
    CUgraph g = nullptr;
    CU_CHECK(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle off = 0, pick = 0;
    expect("cuGraphConditionalHandleCreate",
           cuGraphConditionalHandleCreate(&off, g, nullptr, 0, CU_GRAPH_COND_ASSIGN_DEFAULT), CUDA_SUCCESS);
    CU_CHECK(cuGraphConditionalHandleCreate(&pick, g, nullptr, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
    expect("cuGraphConditionalHandleCreate(null)", cuGraphConditionalHandleCreate(nullptr, g, nullptr, 0, 0),
           CUDA_ERROR_INVALID_VALUE);
    CUgraph if_else[2] = {}, cases[2] = {};
    conditional_node(g, off, CU_GRAPH_COND_TYPE_IF, 2, if_else);
    conditional_node(g, pick, CU_GRAPH_COND_TYPE_SWITCH, 2, cases);
    expect_true("every body a graph", if_else[0] && if_else[1] && cases[0] && cases[1]);
    set_in_body(if_else[0], da, 7.0f);
    set_in_body(if_else[1], da, 2.0f); // the else body: the conditional is 0
    set_in_body(cases[0], db, 7.0f);
    set_in_body(cases[1], db, 3.0f);   // case 1
    expect("cuGraphDestroy(a body)", cuGraphDestroy(cases[0]), CUDA_ERROR_INVALID_VALUE);
    launch_once(g);
    expect_true("IF ran its else body", first_of(da) == 2.0f);
    expect_true("SWITCH ran case 1", first_of(db) == 3.0f);
    CU_CHECK(cuGraphDestroy(g));
}

// Captured: a memset, then (by hand) an IF node on the capture's graph after
// it, the capture's dependencies set to the node, then a copy.
void captured_conditional(CUdeviceptr da, CUdeviceptr db)
{
    CUstream s = nullptr;
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CU_CHECK(cuMemsetD32Async(da, 0x40a00000u /* 5.0f */, kN, s));
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph under = nullptr;
    const CUgraphNode* deps = nullptr;
    size_t n = 0;
    expect("cuStreamGetCaptureInfo(graph, dependencies)",
           cuStreamGetCaptureInfo(s, &status, nullptr, &under, &deps, nullptr, &n), CUDA_SUCCESS);
    expect_true("the capture's graph and its one dependency", under != nullptr && n == 1 && deps != nullptr);
    CUgraphConditionalHandle on = 0;
    CU_CHECK(cuGraphConditionalHandleCreate(&on, under, nullptr, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
    CUgraph body = nullptr;
    CUgraphNode node = conditional_node(under, on, CU_GRAPH_COND_TYPE_IF, 1, &body, deps, n);
    set_in_body(body, db, 6.0f);
    expect("cuStreamUpdateCaptureDependencies(set)",
           cuStreamUpdateCaptureDependencies(s, &node, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES), CUDA_SUCCESS);
    CU_CHECK(cuMemcpyDtoDAsync(da, db, kN * 4, s));
    CUgraph g = nullptr;
    expect("cuStreamEndCapture (a graph named while it ran)", cuStreamEndCapture(s, &g), CUDA_SUCCESS);
    expect_true("the same graph", g == under);
    launch_once(g);
    expect_true("the copy ran after the IF's body", first_of(da) == 6.0f);
    CU_CHECK(cuGraphDestroy(g));

    // Into a graph of the program's, after its one node.
    CU_CHECK(cuGraphCreate(&g, 0));
    CUgraphNode first = nullptr;
    CU_CHECK(cuGraphAddEmptyNode(&first, g, nullptr, 0));
    expect("cuStreamBeginCaptureToGraph",
           cuStreamBeginCaptureToGraph(s, g, &first, nullptr, 1, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
    CU_CHECK(cuMemsetD32Async(db, 0x41000000u /* 8.0f */, kN, s));
    CUgraph back = nullptr;
    expect("cuStreamEndCapture (into a graph)", cuStreamEndCapture(s, &back), CUDA_SUCCESS);
    expect_true("the program's graph", back == g);
    CU_CHECK(cuStreamBeginCaptureToGraph(s, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED));
    expect("cuStreamEndCapture (into a graph, not asked back)", cuStreamEndCapture(s, nullptr), CUDA_SUCCESS);
    size_t nodes = 0;
    CU_CHECK(cuGraphGetNodes(g, nullptr, &nodes));
    expect_true("its node and the captured one", nodes == 2);
    launch_once(g);
    expect_true("the captured memset ran", first_of(db) == 8.0f);
    // Device work after a captured host function is refused at the end; the
    // program's graph stays the program's.
    CU_CHECK(cuStreamBeginCaptureToGraph(s, g, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_RELAXED));
    CU_CHECK(cuLaunchHostFunc(s, no_op, nullptr));
    CU_CHECK(cuMemsetD32Async(db, 0, kN, s));
    expect("cuStreamEndCapture (into a graph, device work after a host function)", cuStreamEndCapture(s, &back),
           CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    expect("cuGraphGetNodes (the program's graph after a refused capture)", cuGraphGetNodes(g, nullptr, &nodes),
           CUDA_SUCCESS);
    expect("cuGraphDestroy (the program's graph after a refused capture)", cuGraphDestroy(g), CUDA_SUCCESS);
    CU_CHECK(cuStreamDestroy(s));
}

// A child graph node: a copy of the child, named by the node.
void child_graph(CUdeviceptr da)
{
    CUgraph child = nullptr, parent = nullptr;
    CU_CHECK(cuGraphCreate(&child, 0));
    CU_CHECK(cuGraphCreate(&parent, 0));
    set_node(child, da, 9.0f);
    CUgraphNode node = nullptr;
    expect("cuGraphAddChildGraphNode", cuGraphAddChildGraphNode(&node, parent, nullptr, 0, child), CUDA_SUCCESS);
    CUgraph held = nullptr;
    expect("cuGraphChildGraphNodeGetGraph", cuGraphChildGraphNodeGetGraph(node, &held), CUDA_SUCCESS);
    size_t n = 0;
    CU_CHECK(cuGraphGetNodes(held, nullptr, &n));
    expect_true("the node's copy of the child", held != nullptr && held != child && n == 1);
    set_node(child, da, 7.0f); // after the copy: not in it
    CU_CHECK(cuMemsetD32(da, 0, kN));
    launch_once(parent);
    expect_true("the child graph node ran its copy", first_of(da) == 9.0f);
    expect("cuGraphAddChildGraphNode(itself)", cuGraphAddChildGraphNode(&node, parent, nullptr, 0, parent),
           CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuGraphDestroy(parent));
    CU_CHECK(cuGraphDestroy(child));
}

} // namespace

void graph_conditional_calls(CUfunction add)
{
    g_add = add;
    CUdeviceptr da = 0, db = 0;
    CU_CHECK(cuMemAlloc(&da, kN * 4));
    CU_CHECK(cuMemAlloc(&db, kN * 4));
    explicit_conditionals(da, db);
    captured_conditional(da, db);
    child_graph(da);
    CU_CHECK(cuMemFree(da));
    CU_CHECK(cuMemFree(db));
    for (int i = 0; i < g_half_count; ++i)
        CU_CHECK(cuMemFree(g_halves[i]));
}
