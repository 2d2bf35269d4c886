// conformance, continued: CUDA graphs and stream capture (explicit graphs,
// captures, host nodes, updates), their refusals and the VMM's node quota.
// `add` is vector_add(a, b, c, n).
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {

constexpr unsigned kN = 256;
int g_host_calls = 0;
float g_seen = -1; // what hc[5] held when the host function ran
float* g_hc = nullptr;
void host_step(void*)
{
    ++g_host_calls;
    g_seen = g_hc[5];
}

bool sums_are(const float* c, float first_a, float b)
{
    bool ok = true;
    for (unsigned i = 0; i < kN; ++i)
        ok &= c[i] == first_a + static_cast<float>(i) + b;
    return ok;
}

void fill(float* a, float first)
{
    for (unsigned i = 0; i < kN; ++i)
        a[i] = first + static_cast<float>(i);
}

// memcpy a in, memset b to 1, c = a + b, memcpy c out, host step: built
// explicitly, launched twice with new input.
void explicit_graph(CUfunction add, float* ha, float* hc, CUdeviceptr da, CUdeviceptr db, CUdeviceptr dc)
{
    CUgraph g = nullptr;
    expect("cuGraphCreate", cuGraphCreate(&g, 0), CUDA_SUCCESS);
    expect("cuGraphCreate(flags)", cuGraphCreate(&g, 1), CUDA_ERROR_INVALID_VALUE);
    CUgraphNode in = nullptr, set = nullptr, sum = nullptr, out = nullptr, host = nullptr;
    CUDA_MEMCPY3D copy = {};
    copy.srcMemoryType = CU_MEMORYTYPE_HOST, copy.srcHost = ha;
    copy.dstMemoryType = CU_MEMORYTYPE_DEVICE, copy.dstDevice = da;
    copy.WidthInBytes = kN * 4, copy.Height = 1, copy.Depth = 1;
    expect("cuGraphAddMemcpyNode(HtoD)", cuGraphAddMemcpyNode(&in, g, nullptr, 0, &copy, nullptr), CUDA_SUCCESS);
    CUDA_MEMSET_NODE_PARAMS ms = {db, 0, 0x3f800000u /* 1.0f */, 4, kN, 1};
    expect("cuGraphAddMemsetNode", cuGraphAddMemsetNode(&set, g, nullptr, 0, &ms, nullptr), CUDA_SUCCESS);
    unsigned n = kN;
    void* params[] = {&da, &db, &dc, &n};
    CUDA_KERNEL_NODE_PARAMS kp = {add, 1, 1, 1, kN, 1, 1, 0, params, nullptr, nullptr, nullptr};
    const CUgraphNode both[] = {in, set};
    expect("cuGraphAddKernelNode", cuGraphAddKernelNode(&sum, g, both, 2, &kp), CUDA_SUCCESS);
    CUDA_MEMCPY3D back = {};
    back.srcMemoryType = CU_MEMORYTYPE_DEVICE, back.srcDevice = dc;
    back.dstMemoryType = CU_MEMORYTYPE_HOST, back.dstHost = hc;
    back.WidthInBytes = kN * 4, back.Height = 1, back.Depth = 1;
    expect("cuGraphAddMemcpyNode(DtoH)", cuGraphAddMemcpyNode(&out, g, &sum, 1, &back, nullptr), CUDA_SUCCESS);
    CUDA_HOST_NODE_PARAMS hp = {host_step, nullptr};
    expect("cuGraphAddHostNode", cuGraphAddHostNode(&host, g, &out, 1, &hp), CUDA_SUCCESS);
    size_t count = 0;
    expect("cuGraphGetNodes(count)", cuGraphGetNodes(g, nullptr, &count), CUDA_SUCCESS);
    expect_true("five nodes", count == 5);
    CUgraphNode nodes[8] = {};
    count = 8;
    expect("cuGraphGetNodes", cuGraphGetNodes(g, nodes, &count), CUDA_SUCCESS);
    expect_true("the nodes as added", count == 5 && nodes[0] == in && nodes[4] == host);

    CUgraphExec exec = nullptr;
    expect("cuGraphInstantiate", cuGraphInstantiate(&exec, g, 0), CUDA_SUCCESS);
    expect("cuGraphInstantiate(flags)", cuGraphInstantiate(&exec, g, 4), CUDA_ERROR_INVALID_VALUE);
    g_hc = hc;
    for (int round = 0; round < 2; ++round) {
        fill(ha, 10.0f * static_cast<float>(round));
        expect("cuGraphLaunch", cuGraphLaunch(exec, 0), CUDA_SUCCESS);
        expect("cuStreamSynchronize", cuStreamSynchronize(0), CUDA_SUCCESS);
        expect_true("the graph's sums", sums_are(hc, 10.0f * static_cast<float>(round), 1.0f));
    }
    expect_true("the host node ran after the copy back, once a launch",
                g_host_calls == 2 && g_seen == 10.0f + 5.0f + 1.0f);
    CUDA_HOST_NODE_PARAMS got = {};
    expect("cuGraphHostNodeGetParams", cuGraphHostNodeGetParams(host, &got), CUDA_SUCCESS);
    expect_true("its function", got.fn == host_step);

    // The exec's kernel node: b + b instead; then the graph's again by an update.
    void* twice[] = {&db, &db, &dc, &n};
    kp.kernelParams = twice;
    expect("cuGraphExecKernelNodeSetParams", cuGraphExecKernelNodeSetParams(exec, sum, &kp), CUDA_SUCCESS);
    expect("cuGraphLaunch", cuGraphLaunch(exec, 0), CUDA_SUCCESS);
    bool all_two = true;
    for (unsigned i = 0; i < kN; ++i)
        all_two &= hc[i] == 2.0f;
    expect_true("the exec's new parameters", all_two);
    CUgraphExecUpdateResultInfo info = {};
    expect("cuGraphExecUpdate", cuGraphExecUpdate(exec, g, &info), CUDA_SUCCESS);
    expect_true("CU_GRAPH_EXEC_UPDATE_SUCCESS", info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
    expect("cuGraphLaunch", cuGraphLaunch(exec, 0), CUDA_SUCCESS);
    expect_true("the graph's parameters again", sums_are(hc, 10.0f, 1.0f));
    CUgraphNode extra = nullptr;
    expect("cuGraphAddEmptyNode", cuGraphAddEmptyNode(&extra, g, &out, 1), CUDA_SUCCESS);
    expect("cuGraphExecUpdate(topology changed)", cuGraphExecUpdate(exec, g, &info),
           CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    expect_true("CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED", info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    expect("cuGraphDestroyNode", cuGraphDestroyNode(extra), CUDA_SUCCESS);
    expect("cuGraphDestroyNode(again)", cuGraphDestroyNode(extra), CUDA_ERROR_INVALID_HANDLE);

    // Device work after a host node cannot keep its order: refused.
    CUgraphNode late = nullptr;
    expect("cuGraphAddKernelNode(after the host node)", cuGraphAddKernelNode(&late, g, &host, 1, &kp), CUDA_SUCCESS);
    CUgraphExec refused = nullptr;
    expect("cuGraphInstantiate(device work after a host node)", cuGraphInstantiate(&refused, g, 0),
           CUDA_ERROR_NOT_SUPPORTED);
    expect("cuGraphUpload", cuGraphUpload(exec, 0), CUDA_SUCCESS);
    expect("cuGraphExecDestroy", cuGraphExecDestroy(exec), CUDA_SUCCESS);
    expect("cuGraphDestroy", cuGraphDestroy(g), CUDA_SUCCESS);
    expect("cuGraphDestroy(again)", cuGraphDestroy(g), CUDA_ERROR_INVALID_HANDLE);
    expect("cuGraphAddEmptyNode(destroyed graph)", cuGraphAddEmptyNode(&late, g, nullptr, 0), CUDA_ERROR_INVALID_HANDLE);
    expect("cuGraphLaunch(destroyed exec)", cuGraphLaunch(exec, 0), CUDA_SUCCESS); // queued: reported later
    expect("... at cuStreamSynchronize", cuStreamSynchronize(0), CUDA_ERROR_INVALID_HANDLE);
}

// The same work captured from a stream: recorded, not run, until launched.
void captured_graph(CUfunction add, float* ha, float* hc, CUdeviceptr da, CUdeviceptr db, CUdeviceptr dc)
{
    CUstream s = nullptr, side = nullptr;
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_CHECK(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
    CUevent fork = nullptr, join = nullptr;
    CU_CHECK(cuEventCreate(&fork, 0));
    CU_CHECK(cuEventCreate(&join, 0));
    unsigned n = kN;
    void* params[] = {&da, &db, &dc, &n};
    fill(ha, 100.0f);
    for (unsigned i = 0; i < kN; ++i)
        hc[i] = -1.0f;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
    expect("cuStreamBeginCapture(the default stream)", cuStreamBeginCapture(0, CU_STREAM_CAPTURE_MODE_GLOBAL),
           CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    expect("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    expect("cuStreamIsCapturing", cuStreamIsCapturing(s, &status), CUDA_SUCCESS);
    expect_true("ACTIVE", status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    cuuint64_t id = 0;
    expect("cuStreamGetCaptureInfo", cuStreamGetCaptureInfo(s, &status, &id, nullptr, nullptr, nullptr, nullptr),
           CUDA_SUCCESS);
    expect_true("an id", id != 0);
    int priority = -1;
    expect("cuStreamGetPriority(capturing; cuBLAS asks it so)", cuStreamGetPriority(s, &priority), CUDA_SUCCESS);
    CUgraph under = nullptr;
    expect("cuStreamGetCaptureInfo(the graph under capture)",
           cuStreamGetCaptureInfo(s, &status, &id, &under, nullptr, nullptr, nullptr), CUDA_SUCCESS);
    expect("cuMemcpyHtoDAsync(captured)", cuMemcpyHtoDAsync(da, ha, kN * 4, s), CUDA_SUCCESS);
    expect("cuEventRecord(fork)", cuEventRecord(fork, s), CUDA_SUCCESS);
    expect("cuStreamWaitEvent(side joins)", cuStreamWaitEvent(side, fork, 0), CUDA_SUCCESS);
    expect("cuMemsetD32Async(captured, side)", cuMemsetD32Async(db, 0x40000000u /* 2.0f */, kN, side), CUDA_SUCCESS);
    expect("cuEventRecord(join)", cuEventRecord(join, side), CUDA_SUCCESS);
    expect("cuStreamWaitEvent(join)", cuStreamWaitEvent(s, join, 0), CUDA_SUCCESS);
    expect("cuLaunchKernel(captured)", cuLaunchKernel(add, 1, 1, 1, kN, 1, 1, 0, s, params, nullptr), CUDA_SUCCESS);
    expect("cuMemcpyDtoHAsync(captured)", cuMemcpyDtoHAsync(hc, dc, kN * 4, s), CUDA_SUCCESS);
    g_host_calls = 0;
    g_hc = hc;
    expect("cuLaunchHostFunc(captured)", cuLaunchHostFunc(s, host_step, nullptr), CUDA_SUCCESS);
    expect_true("nothing ran while capturing", hc[0] == -1.0f && g_host_calls == 0);
    CUgraph g = nullptr;
    expect("cuStreamEndCapture", cuStreamEndCapture(s, &g), CUDA_SUCCESS);
    expect_true("the graph named while the capture ran", g == under && g != nullptr);
    expect("cuStreamIsCapturing(after)", cuStreamIsCapturing(s, &status), CUDA_SUCCESS);
    expect_true("NONE", status == CU_STREAM_CAPTURE_STATUS_NONE);
    size_t count = 0;
    expect("cuGraphGetNodes(captured)", cuGraphGetNodes(g, nullptr, &count), CUDA_SUCCESS);
    expect_true("at least the copies, the memset and the kernel", count >= 4);
    CUgraphExec exec = nullptr;
    expect("cuGraphInstantiate(captured)", cuGraphInstantiate(&exec, g, 0), CUDA_SUCCESS);
    for (int round = 0; round < 3; ++round) {
        fill(ha, static_cast<float>(round));
        expect("cuGraphLaunch(captured)", cuGraphLaunch(exec, s), CUDA_SUCCESS);
        expect_true("the captured work's sums", sums_are(hc, static_cast<float>(round), 2.0f));
    }
    expect_true("the captured host function, after the copy back", g_host_calls == 3 && g_seen == 2.0f + 5.0f + 2.0f);

    // A graph launched into a capture with host functions: refused.
    CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    expect("cuGraphLaunch(with host steps, into a capture)", cuGraphLaunch(exec, s),
           CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    // Work after a captured host function cannot keep its order: refused at the end.
    expect("cuLaunchHostFunc(captured)", cuLaunchHostFunc(s, host_step, nullptr), CUDA_SUCCESS);
    expect("cuLaunchKernel(after it)", cuLaunchKernel(add, 1, 1, 1, kN, 1, 1, 0, s, params, nullptr), CUDA_SUCCESS);
    CUgraph refused = nullptr;
    expect("cuStreamEndCapture(device work after a host function)", cuStreamEndCapture(s, &refused),
           CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    // Only where the capture began can it end (what the driver makes of the
    // capture after that answer is not checked here).
    CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CU_CHECK(cuEventRecord(fork, s));
    CU_CHECK(cuStreamWaitEvent(side, fork, 0));
    expect("cuStreamEndCapture(a joined stream)", cuStreamEndCapture(side, &refused), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
    if (cuStreamEndCapture(s, &refused) == CUDA_SUCCESS && refused != nullptr)
        CU_CHECK(cuGraphDestroy(refused));
    // Synchronizing a capturing stream invalidates the capture, as the driver does.
    CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    expect("cuStreamSynchronize(capturing)", cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    expect("cuStreamEndCapture(invalidated)", cuStreamEndCapture(s, &refused), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    expect("cuStreamEndCapture(not capturing)", cuStreamEndCapture(s, &refused), CUDA_ERROR_ILLEGAL_STATE);
    expect("cuMemsetD32Async(after the capture)", cuMemsetD32Async(db, 0, kN, s), CUDA_SUCCESS);
    expect("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);

    expect("cuGraphExecDestroy", cuGraphExecDestroy(exec), CUDA_SUCCESS);
    expect("cuGraphDestroy", cuGraphDestroy(g), CUDA_SUCCESS);
    CU_CHECK(cuEventDestroy(fork));
    CU_CHECK(cuEventDestroy(join));
    CU_CHECK(cuStreamDestroy(side));
    CU_CHECK(cuStreamDestroy(s));
}

// The VMM bounds the nodes a VM holds (max_graph_nodes, 65,536 by default),
// executable graphs' included: a graph of 4,096 captured memsets (queued
// calls, cheap even under emulation) instantiated until the quota refuses.
void node_quota(CUdeviceptr scratch)
{
    constexpr unsigned kNodes = 4096, kMaxExecs = 32;
    CUstream s = nullptr;
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CUresult r = CUDA_SUCCESS;
    for (unsigned i = 0; i < kNodes && r == CUDA_SUCCESS; ++i)
        r = cuMemsetD8Async(scratch, static_cast<unsigned char>(i), 16, s);
    expect("cuMemsetD8Async x 4096 (captured)", r, CUDA_SUCCESS);
    CUgraph g = nullptr;
    expect("cuStreamEndCapture(4096 nodes)", cuStreamEndCapture(s, &g), CUDA_SUCCESS);
    CUgraphExec execs[kMaxExecs] = {};
    unsigned made = 0;
    while (made < kMaxExecs && (r = cuGraphInstantiate(&execs[made], g, 0)) == CUDA_SUCCESS)
        ++made;
    expect("cuGraphInstantiate(past the VMM's node quota)", r, CUDA_ERROR_OUT_OF_MEMORY);
    expect_true("a few execs of 4096 nodes fit first", made >= 4 && made < kMaxExecs);
    for (unsigned i = 0; i < made; ++i)
        CU_CHECK(cuGraphExecDestroy(execs[i]));
    expect("cuGraphInstantiate(the quota given back)", cuGraphInstantiate(&execs[0], g, 0), CUDA_SUCCESS);
    expect("cuGraphLaunch(4096 memsets)", cuGraphLaunch(execs[0], s), CUDA_SUCCESS);
    expect("cuStreamSynchronize", cuStreamSynchronize(s), CUDA_SUCCESS);
    CU_CHECK(cuGraphExecDestroy(execs[0]));
    CU_CHECK(cuGraphDestroy(g));
    CU_CHECK(cuStreamDestroy(s));

    CU_CHECK(cuGraphCreate(&g, 0));
    CUgraphNode node;
    expect("cuGraphAddEmptyNode", cuGraphAddEmptyNode(&node, g, nullptr, 0), CUDA_SUCCESS);
    CUgraphNode dangling = reinterpret_cast<CUgraphNode>(uintptr_t{0x4e00000000000001ull});
    expect("cuGraphAddEmptyNode(a dependency never issued)", cuGraphAddEmptyNode(&node, g, &dangling, 1),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuGraphAddEmptyNode(dependencies nullptr)", cuGraphAddEmptyNode(&node, g, nullptr, 1),
           CUDA_ERROR_INVALID_VALUE);
    size_t count = 0;
    expect("cuGraphGetNodes(the refused add left nothing)", cuGraphGetNodes(g, nullptr, &count), CUDA_SUCCESS);
    expect_true("one node", count == 1);
    CU_CHECK(cuGraphDestroy(g));
}

} // namespace

void graph_calls(CUfunction add)
{
    auto* ha = static_cast<float*>(pinned_alloc(kN * 4));
    auto* hc = static_cast<float*>(pinned_alloc(kN * 4));
    CUdeviceptr da = 0, db = 0, dc = 0;
    CU_CHECK(cuMemAlloc(&da, kN * 4));
    CU_CHECK(cuMemAlloc(&db, kN * 4));
    CU_CHECK(cuMemAlloc(&dc, kN * 4));
    explicit_graph(add, ha, hc, da, db, dc);
    captured_graph(add, ha, hc, da, db, dc);
    node_quota(db);
    CU_CHECK(cuMemFree(da));
    CU_CHECK(cuMemFree(db));
    CU_CHECK(cuMemFree(dc));
}
