// conformance, continued: stream attributes (set, read back, copied, and
// refused), and a graph's shape read back and its clone launched (roots,
// edges, dependencies, node types, cuGraphClone with a host node).
// `add` is vector_add(a, b, c, n).
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {

constexpr unsigned kN = 256;
int g_clone_host_calls = 0;
void count_call(void*) { ++g_clone_host_calls; }

bool contains(const CUgraphNode* list, size_t n, CUgraphNode node)
{
    for (size_t i = 0; i < n; ++i)
        if (list[i] == node)
            return true;
    return false;
}

void stream_attributes(CUfunction add, CUdeviceptr da, CUdeviceptr db, CUdeviceptr dc, float* hc)
{
    CUstream s = nullptr, t = nullptr;
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_CHECK(cuStreamCreate(&t, 0));
    unsigned flags = 7;
    expect("cuStreamGetFlags", cuStreamGetFlags(s, &flags), CUDA_SUCCESS);
    expect_true("CU_STREAM_NON_BLOCKING", flags == CU_STREAM_NON_BLOCKING);
    expect("cuStreamGetFlags(default stream)", cuStreamGetFlags(0, &flags), CUDA_SUCCESS);
    expect_true("0", flags == 0);
    CUdevice dev = -1, ctx_dev = -2;
    expect("cuStreamGetDevice", cuStreamGetDevice(s, &dev), CUDA_SUCCESS);
    CU_CHECK(cuCtxGetDevice(&ctx_dev));
    expect_true("the context's device", dev == ctx_dev);
    expect("cuStreamGetDevice(null)", cuStreamGetDevice(s, nullptr), CUDA_ERROR_INVALID_VALUE);

    // simpleAttributes' window: over a device buffer, read back as set.
    CUstreamAttrValue v = {};
    v.accessPolicyWindow.base_ptr = reinterpret_cast<void*>(da);
    v.accessPolicyWindow.num_bytes = kN * 4;
    v.accessPolicyWindow.hitRatio = 0.6f;
    v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
    v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
    expect("cuStreamSetAttribute(window)", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v),
           CUDA_SUCCESS);
    expect("cuCtxResetPersistingL2Cache", cuCtxResetPersistingL2Cache(), CUDA_SUCCESS);
    CUstreamAttrValue back = {};
    expect("cuStreamGetAttribute(window)", cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &back),
           CUDA_SUCCESS);
    expect_true("the window as set",
                back.accessPolicyWindow.base_ptr == reinterpret_cast<void*>(da) &&
                    back.accessPolicyWindow.num_bytes == kN * 4 && back.accessPolicyWindow.hitRatio > 0.59f &&
                    back.accessPolicyWindow.hitRatio < 0.61f &&
                    back.accessPolicyWindow.hitProp == CU_ACCESS_PROPERTY_PERSISTING &&
                    back.accessPolicyWindow.missProp == CU_ACCESS_PROPERTY_STREAMING);
    // Kernels run on the stream under it.
    unsigned n = kN;
    void* params[] = {&da, &db, &dc, &n};
    CU_CHECK(cuMemsetD32Async(da, 0x40000000 /* 2.0f */, kN, s));
    CU_CHECK(cuMemsetD32Async(db, 0x3f800000 /* 1.0f */, kN, s));
    expect("cuLaunchKernel(under a window)", cuLaunchKernel(add, 1, 1, 1, kN, 1, 1, 0, s, params, nullptr),
           CUDA_SUCCESS);
    CU_CHECK(cuMemcpyDtoHAsync(hc, dc, kN * 4, s));
    CU_CHECK(cuStreamSynchronize(s));
    expect_true("its sums", hc[0] == 3.0f && hc[kN - 1] == 3.0f);

    CUstreamAttrValue sync = {};
    sync.syncPolicy = CU_SYNC_POLICY_BLOCKING_SYNC;
    expect("cuStreamSetAttribute(sync policy)", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &sync),
           CUDA_SUCCESS);
    CUstreamAttrValue dom = {};
    dom.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
    expect("cuStreamSetAttribute(mem sync domain)", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &dom),
           CUDA_SUCCESS);
    CUstreamAttrValue prio = {};
    prio.priority = -3;
    expect("cuStreamSetAttribute(priority)", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &prio), CUDA_SUCCESS);
    expect("cuStreamGetAttribute(priority)", cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &prio), CUDA_SUCCESS);
    expect_true("priority clamped to the range [0, 0]", prio.priority == 0);

    // Copied onto t: every attribute as s has it.
    expect("cuStreamCopyAttributes", cuStreamCopyAttributes(t, s), CUDA_SUCCESS);
    back = {};
    expect("cuStreamGetAttribute(copied window)", cuStreamGetAttribute(t, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &back),
           CUDA_SUCCESS);
    expect_true("the copied window", back.accessPolicyWindow.base_ptr == reinterpret_cast<void*>(da) &&
                                         back.accessPolicyWindow.num_bytes == kN * 4);
    expect("cuStreamGetAttribute(copied sync policy)",
           cuStreamGetAttribute(t, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &back), CUDA_SUCCESS);
    expect_true("CU_SYNC_POLICY_BLOCKING_SYNC", back.syncPolicy == CU_SYNC_POLICY_BLOCKING_SYNC);
    expect("cuStreamGetAttribute(copied domain)", cuStreamGetAttribute(t, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &back),
           CUDA_SUCCESS);
    expect_true("CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE", back.memSyncDomain == CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE);

    // Refusals: a window over host memory, a ratio past 1, a launch-only attribute, no value.
    CUstreamAttrValue bad = v;
    bad.accessPolicyWindow.base_ptr = hc;
    expect("cuStreamSetAttribute(window over host memory)",
           cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &bad), CUDA_ERROR_INVALID_VALUE);
    bad = v;
    bad.accessPolicyWindow.hitRatio = 1.5f;
    expect("cuStreamSetAttribute(hitRatio 1.5)", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &bad),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuStreamSetAttribute(cooperative)", cuStreamSetAttribute(s, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuStreamSetAttribute(null value)", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, nullptr),
           CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuStreamDestroy(t));
    expect("cuStreamGetAttribute(destroyed stream)",
           cuStreamGetAttribute(t, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &back), CUDA_ERROR_INVALID_HANDLE);
    CU_CHECK(cuStreamDestroy(s));
}

// simpleCudaGraphs' shape: memcpy in and memset to a kernel, a copy back, a
// host node; read back, then cloned and the clone launched.
void graph_shape(CUfunction add, float* ha, float* hc, CUdeviceptr da, CUdeviceptr db, CUdeviceptr dc)
{
    CUgraph g = nullptr;
    CU_CHECK(cuGraphCreate(&g, 0));
    CUgraphNode in = nullptr, set = nullptr, sum = nullptr, out = nullptr, host = nullptr;
    CUDA_MEMCPY3D copy = {};
    copy.srcMemoryType = CU_MEMORYTYPE_HOST, copy.srcHost = ha;
    copy.dstMemoryType = CU_MEMORYTYPE_DEVICE, copy.dstDevice = da;
    copy.WidthInBytes = kN * 4, copy.Height = 1, copy.Depth = 1;
    CU_CHECK(cuGraphAddMemcpyNode(&in, g, nullptr, 0, &copy, nullptr));
    CUDA_MEMSET_NODE_PARAMS ms = {db, 0, 0x3f800000u /* 1.0f */, 4, kN, 1};
    CU_CHECK(cuGraphAddMemsetNode(&set, g, nullptr, 0, &ms, nullptr));
    unsigned n = kN;
    void* params[] = {&da, &db, &dc, &n};
    CUDA_KERNEL_NODE_PARAMS kp = {add, 1, 1, 1, kN, 1, 1, 0, params, nullptr, nullptr, nullptr};
    const CUgraphNode both[] = {in, set};
    CU_CHECK(cuGraphAddKernelNode(&sum, g, both, 2, &kp));
    CUDA_MEMCPY3D back = {};
    back.srcMemoryType = CU_MEMORYTYPE_DEVICE, back.srcDevice = dc;
    back.dstMemoryType = CU_MEMORYTYPE_HOST, back.dstHost = hc;
    back.WidthInBytes = kN * 4, back.Height = 1, back.Depth = 1;
    CU_CHECK(cuGraphAddMemcpyNode(&out, g, &sum, 1, &back, nullptr));
    CUDA_HOST_NODE_PARAMS hp = {count_call, nullptr};
    CU_CHECK(cuGraphAddHostNode(&host, g, &out, 1, &hp));

    CUgraphNode roots[4] = {};
    size_t count = 0;
    expect("cuGraphGetRootNodes(count)", cuGraphGetRootNodes(g, nullptr, &count), CUDA_SUCCESS);
    expect_true("two roots", count == 2);
    count = 4;
    expect("cuGraphGetRootNodes", cuGraphGetRootNodes(g, roots, &count), CUDA_SUCCESS);
    expect_true("the copy in and the memset, the room after nulled",
                count == 2 && contains(roots, 2, in) && contains(roots, 2, set) && roots[2] == nullptr);
    CUgraphNode from[8] = {}, to[8] = {};
    CUgraphEdgeData data[8];
    count = 0;
    expect("cuGraphGetEdges(count)", cuGraphGetEdges(g, nullptr, nullptr, nullptr, &count), CUDA_SUCCESS);
    expect_true("four edges", count == 4);
    count = 8;
    expect("cuGraphGetEdges", cuGraphGetEdges(g, from, to, data, &count), CUDA_SUCCESS);
    bool found = count == 4;
    for (size_t i = 0; i < count; ++i)
        found &= (to[i] == sum && (from[i] == in || from[i] == set)) || (from[i] == sum && to[i] == out) ||
                 (from[i] == out && to[i] == host);
    expect_true("the edges as added, default edge data", found && data[0].type == 0 && from[4] == nullptr);
    expect("cuGraphGetEdges(one array)", cuGraphGetEdges(g, from, nullptr, nullptr, &count), CUDA_ERROR_INVALID_VALUE);
    CUgraphNode deps[4] = {};
    count = 4;
    expect("cuGraphNodeGetDependencies", cuGraphNodeGetDependencies(sum, deps, nullptr, &count), CUDA_SUCCESS);
    expect_true("the kernel's two", count == 2 && contains(deps, 2, in) && contains(deps, 2, set));
    count = 4;
    expect("cuGraphNodeGetDependentNodes", cuGraphNodeGetDependentNodes(sum, deps, nullptr, &count), CUDA_SUCCESS);
    expect_true("the copy back", count == 1 && deps[0] == out);
    {   // A kernel node its own checks refuse hands its dependencies to no later node.
        CUgraph g2 = nullptr;
        CUgraphNode first = nullptr, next = nullptr;
        CU_CHECK(cuGraphCreate(&g2, 0));
        CU_CHECK(cuGraphAddEmptyNode(&first, g2, nullptr, 0));
        expect("cuGraphAddKernelNode(no parameters)", cuGraphAddKernelNode(&next, g2, &first, 1, nullptr),
               CUDA_ERROR_INVALID_VALUE);
        CU_CHECK(cuGraphAddEmptyNode(&next, g2, nullptr, 0));
        size_t n2 = 4;
        expect("cuGraphNodeGetDependencies(after a refused node)", cuGraphNodeGetDependencies(next, deps, nullptr, &n2),
               CUDA_SUCCESS);
        expect_true("none: the refused node's were dropped", n2 == 0);
        CU_CHECK(cuGraphDestroy(g2));
    }
    count = 0;
    expect("cuGraphNodeGetDependentNodes(count)", cuGraphNodeGetDependentNodes(host, nullptr, nullptr, &count),
           CUDA_SUCCESS);
    expect_true("none after the host node", count == 0);
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    expect("cuGraphNodeGetType(kernel)", cuGraphNodeGetType(sum, &type), CUDA_SUCCESS);
    expect_true("CU_GRAPH_NODE_TYPE_KERNEL", type == CU_GRAPH_NODE_TYPE_KERNEL);
    expect("cuGraphNodeGetType(memcpy)", cuGraphNodeGetType(in, &type), CUDA_SUCCESS);
    expect_true("CU_GRAPH_NODE_TYPE_MEMCPY", type == CU_GRAPH_NODE_TYPE_MEMCPY);
    expect("cuGraphNodeGetType(memset)", cuGraphNodeGetType(set, &type), CUDA_SUCCESS);
    expect_true("CU_GRAPH_NODE_TYPE_MEMSET", type == CU_GRAPH_NODE_TYPE_MEMSET);
    expect("cuGraphNodeGetType(host)", cuGraphNodeGetType(host, &type), CUDA_SUCCESS);
    expect_true("CU_GRAPH_NODE_TYPE_HOST", type == CU_GRAPH_NODE_TYPE_HOST);

    // The clone: its own nodes (its host node too), launched without the original.
    CUgraph clone = nullptr;
    expect("cuGraphClone", cuGraphClone(&clone, g), CUDA_SUCCESS);
    CUgraphNode sum2 = nullptr, host2 = nullptr;
    expect("cuGraphNodeFindInClone", cuGraphNodeFindInClone(&sum2, sum, clone), CUDA_SUCCESS);
    expect("cuGraphNodeFindInClone(host node)", cuGraphNodeFindInClone(&host2, host, clone), CUDA_SUCCESS);
    expect_true("copies, not the originals", sum2 != nullptr && sum2 != sum && host2 != host);
    expect("cuGraphNodeGetType(the clone's host node)", cuGraphNodeGetType(host2, &type), CUDA_SUCCESS);
    expect_true("CU_GRAPH_NODE_TYPE_HOST", type == CU_GRAPH_NODE_TYPE_HOST);
    count = 4;
    expect("cuGraphNodeGetDependencies(clone)", cuGraphNodeGetDependencies(sum2, deps, nullptr, &count), CUDA_SUCCESS);
    expect_true("two copies", count == 2 && !contains(deps, 2, in) && !contains(deps, 2, set));
    expect("cuGraphNodeFindInClone(the clone's own node)", cuGraphNodeFindInClone(&sum2, sum2, clone),
           CUDA_ERROR_INVALID_VALUE);
    CUgraphExec exec = nullptr;
    CUDA_GRAPH_INSTANTIATE_PARAMS ip = {CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD, nullptr, nullptr,
                                        CUDA_GRAPH_INSTANTIATE_ERROR};
    expect("cuGraphInstantiateWithParams(upload)", cuGraphInstantiateWithParams(&exec, clone, &ip), CUDA_SUCCESS);
    expect_true("CUDA_GRAPH_INSTANTIATE_SUCCESS", ip.result_out == CUDA_GRAPH_INSTANTIATE_SUCCESS);
    CUgraphExec refused = nullptr;
    ip.flags = 4; // device launch: not offered
    expect("cuGraphInstantiateWithParams(device launch)", cuGraphInstantiateWithParams(&refused, clone, &ip),
           CUDA_ERROR_INVALID_VALUE);
    expect_true("CUDA_GRAPH_INSTANTIATE_ERROR", ip.result_out == CUDA_GRAPH_INSTANTIATE_ERROR);
    CU_CHECK(cuGraphDestroy(g));
    for (unsigned i = 0; i < kN; ++i)
        ha[i] = static_cast<float>(i);
    g_clone_host_calls = 0;
    expect("cuGraphLaunch(clone)", cuGraphLaunch(exec, 0), CUDA_SUCCESS);
    expect("cuStreamSynchronize", cuStreamSynchronize(0), CUDA_SUCCESS);
    expect_true("the clone's sums and host node", hc[7] == 8.0f && hc[kN - 1] == kN && g_clone_host_calls == 1);
    // The exec's host node set to another function; the clone's graph keeps its own.
    CUDA_HOST_NODE_PARAMS other = {count_call, &g_clone_host_calls};
    expect("cuGraphExecHostNodeSetParams", cuGraphExecHostNodeSetParams(exec, host2, &other), CUDA_SUCCESS);
    expect("cuGraphExecHostNodeSetParams(the original's node)", cuGraphExecHostNodeSetParams(exec, host, &other),
           CUDA_ERROR_INVALID_VALUE);
    CUDA_HOST_NODE_PARAMS kept = {};
    CU_CHECK(cuGraphHostNodeGetParams(host2, &kept));
    expect_true("the graph's node unchanged", kept.userData == nullptr);
    CU_CHECK(cuGraphExecDestroy(exec));
    CU_CHECK(cuGraphDestroy(clone));
    expect("cuGraphClone(destroyed graph)", cuGraphClone(&clone, g), CUDA_ERROR_INVALID_HANDLE);
    expect("cuGraphNodeGetType(destroyed node)", cuGraphNodeGetType(sum, &type), CUDA_ERROR_INVALID_HANDLE);
}

} // namespace

void graph_shape_and_stream_attribute_calls(CUfunction add)
{
    auto* ha = static_cast<float*>(pinned_alloc(kN * 4));
    auto* hc = static_cast<float*>(pinned_alloc(kN * 4));
    CUdeviceptr da = 0, db = 0, dc = 0;
    CU_CHECK(cuMemAlloc(&da, kN * 4));
    CU_CHECK(cuMemAlloc(&db, kN * 4));
    CU_CHECK(cuMemAlloc(&dc, kN * 4));
    stream_attributes(add, da, db, dc, hc);
    graph_shape(add, ha, hc, da, db, dc);
    CU_CHECK(cuMemFree(da));
    CU_CHECK(cuMemFree(db));
    CU_CHECK(cuMemFree(dc));
}
