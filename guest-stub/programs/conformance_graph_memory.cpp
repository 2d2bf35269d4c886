// conformance, continued: graph memory. Allocation and free nodes built
// explicitly and by cuGraphAddNode, cuMemAllocAsync and cuMemFreeAsync in a
// capture, an allocation a launch leaves live freed by cuMemFree, the graph
// memory attributes, and what is refused. `add` is vector_add(a, b, c, n).
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {

constexpr unsigned kN = 256;

bool all_are(const float* c, float v)
{
    bool ok = true;
    for (unsigned i = 0; i < kN; ++i)
        ok &= c[i] == v;
    return ok;
}

void clear(float* c)
{
    for (unsigned i = 0; i < kN; ++i)
        c[i] = 0;
}

cuuint64_t graph_memory(CUdevice dev, CUgraphMem_attribute attr)
{
    cuuint64_t v = ~0ull;
    expect("cuDeviceGetGraphMemAttribute", cuDeviceGetGraphMemAttribute(dev, attr, &v), CUDA_SUCCESS);
    return v;
}

CUDA_MEM_ALLOC_NODE_PARAMS alloc_params(CUdevice dev, size_t bytes)
{
    CUDA_MEM_ALLOC_NODE_PARAMS p = {};
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location = CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, dev};
    p.bytesize = bytes;
    return p;
}

CUgraphNodeType type_of(CUgraphNode n)
{
    CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
    expect("cuGraphNodeGetType", cuGraphNodeGetType(n, &t), CUDA_SUCCESS);
    return t;
}

// alloc a -> memset a to 2 -> c = a + b (b holds 1) -> copy c out, and
// copy a itself out, free a; the exec outlives its graph and keeps the
// allocation.
void explicit_nodes(CUfunction add, CUdevice dev, CUdeviceptr db, CUdeviceptr dc, float* hc)
{
    const cuuint64_t before = graph_memory(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT);
    CUgraph g = nullptr;
    CU_CHECK(cuGraphCreate(&g, 0));
    CUgraphNode alloc = nullptr, set = nullptr, sum = nullptr, out = nullptr, release = nullptr, x = nullptr;
    CUDA_MEM_ALLOC_NODE_PARAMS ap = alloc_params(dev, kN * 4);
    expect("cuGraphAddMemAllocNode", cuGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap), CUDA_SUCCESS);
    CUdeviceptr da = ap.dptr;
    expect_true("the node's address", da != 0);
    expect_true("counted", graph_memory(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) == before + kN * 4);
    CUDA_MEMSET_NODE_PARAMS ms = {da, 0, 0x40000000u /* 2.0f */, 4, kN, 1};
    expect("cuGraphAddMemsetNode(graph memory)", cuGraphAddMemsetNode(&set, g, &alloc, 1, &ms, nullptr), CUDA_SUCCESS);
    unsigned n = kN;
    void* params[] = {&da, &db, &dc, &n};
    CUDA_KERNEL_NODE_PARAMS kp = {add, 1, 1, 1, kN, 1, 1, 0, params, nullptr, nullptr, nullptr};
    expect("cuGraphAddKernelNode(graph memory)", cuGraphAddKernelNode(&sum, g, &set, 1, &kp), CUDA_SUCCESS);
    CUDA_MEMCPY3D back = {};
    back.srcMemoryType = CU_MEMORYTYPE_DEVICE, back.srcDevice = dc;
    back.dstMemoryType = CU_MEMORYTYPE_HOST, back.dstHost = hc;
    back.WidthInBytes = kN * 4, back.Height = 1, back.Depth = 1;
    CU_CHECK(cuGraphAddMemcpyNode(&out, g, &sum, 1, &back, nullptr));
    static float ha[kN];
    CUDA_MEMCPY3D peek = back;
    peek.srcDevice = da, peek.dstHost = ha;
    CUgraphNode peeked = nullptr;
    expect("cuGraphAddMemcpyNode(out of graph memory)", cuGraphAddMemcpyNode(&peeked, g, &sum, 1, &peek, nullptr),
           CUDA_SUCCESS);
    const CUgraphNode before_free[] = {sum, peeked};
    expect("cuGraphAddMemFreeNode", cuGraphAddMemFreeNode(&release, g, before_free, 2, da), CUDA_SUCCESS);
    expect_true("CU_GRAPH_NODE_TYPE_MEM_ALLOC", type_of(alloc) == CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    expect_true("CU_GRAPH_NODE_TYPE_MEM_FREE", type_of(release) == CU_GRAPH_NODE_TYPE_MEM_FREE);
    CUDA_MEM_ALLOC_NODE_PARAMS got = {};
    expect("cuGraphMemAllocNodeGetParams", cuGraphMemAllocNodeGetParams(alloc, &got), CUDA_SUCCESS);
    expect_true("its size, address and device",
                got.bytesize == kN * 4 && got.dptr == da && got.poolProps.location.id == dev &&
                    got.poolProps.allocType == CU_MEM_ALLOCATION_TYPE_PINNED);
    CUdeviceptr freed = 0;
    expect("cuGraphMemFreeNodeGetParams", cuGraphMemFreeNodeGetParams(release, &freed), CUDA_SUCCESS);
    expect_true("the freed address", freed == da);
    expect("cuGraphMemFreeNodeGetParams(an alloc node)", cuGraphMemFreeNodeGetParams(alloc, &freed),
           CUDA_ERROR_NOT_SUPPORTED);

    // Refused: an ordinary allocation in a free node, bad pool properties.
    expect("cuGraphAddMemFreeNode(cuMemAlloc's)", cuGraphAddMemFreeNode(&x, g, nullptr, 0, db), CUDA_ERROR_INVALID_VALUE);
    CUDA_MEM_ALLOC_NODE_PARAMS bad = alloc_params(dev, 0);
    expect("cuGraphAddMemAllocNode(0 bytes)", cuGraphAddMemAllocNode(&x, g, nullptr, 0, &bad), CUDA_ERROR_INVALID_VALUE);
    bad = alloc_params(dev + 1, 64);
    expect("cuGraphAddMemAllocNode(another device)", cuGraphAddMemAllocNode(&x, g, nullptr, 0, &bad),
           CUDA_ERROR_INVALID_VALUE);
    bad = alloc_params(dev, 64);
    bad.poolProps.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    expect("cuGraphAddMemAllocNode(IPC handles)", cuGraphAddMemAllocNode(&x, g, nullptr, 0, &bad),
           CUDA_ERROR_NOT_SUPPORTED);
    expect("cuGraphAddMemAllocNode(null)", cuGraphAddMemAllocNode(&x, g, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);

    CUgraphExec e = nullptr;
    expect("cuGraphInstantiateWithFlags(memory nodes)", cuGraphInstantiateWithFlags(&e, g, 0), CUDA_SUCCESS);
    expect("cuGraphDestroy(its exec lives)", cuGraphDestroy(g), CUDA_SUCCESS);
    expect_true("still counted", graph_memory(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) == before + kN * 4);
    for (int launch = 0; launch < 2; ++launch) {
        clear(hc);
        clear(ha);
        expect("cuGraphLaunch(memory nodes)", cuGraphLaunch(e, 0), CUDA_SUCCESS);
        CU_CHECK(cuStreamSynchronize(0));
        expect_true("2 + 1 through graph memory", all_are(hc, 3.0f));
        expect_true("graph memory copied out", all_are(ha, 2.0f));
    }
    expect("cuGraphExecDestroy", cuGraphExecDestroy(e), CUDA_SUCCESS);
    expect_true("given back", graph_memory(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) == before);
    expect_true("the high mark", graph_memory(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH) >= before + kN * 4);
}

// The same work captured: cuMemAllocAsync and cuMemFreeAsync become the
// graph's nodes. Then an allocation a launch leaves live, read and freed
// outside the graph, and made again by the next launch.
void captured(CUfunction add, CUdeviceptr db, CUdeviceptr dc, float* hc)
{
    CUstream s = nullptr;
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUdeviceptr da = 0;
    expect("cuMemAllocAsync(capturing)", cuMemAllocAsync(&da, kN * 4, s), CUDA_SUCCESS);
    CU_CHECK(cuMemsetD32Async(da, 0x40000000u, kN, s));
    unsigned n = kN;
    void* params[] = {&da, &db, &dc, &n};
    CU_CHECK(cuLaunchKernel(add, 1, 1, 1, kN, 1, 1, 0, s, params, nullptr));
    CU_CHECK(cuMemcpyDtoHAsync(hc, dc, kN * 4, s));
    expect("cuMemFreeAsync(capturing)", cuMemFreeAsync(da, s), CUDA_SUCCESS);
    CUgraph g = nullptr;
    expect("cuStreamEndCapture(memory nodes)", cuStreamEndCapture(s, &g), CUDA_SUCCESS);
    CUgraphNode nodes[8] = {};
    size_t count = 8;
    CU_CHECK(cuGraphGetNodes(g, nodes, &count));
    int allocs = 0, frees = 0;
    for (size_t i = 0; i < count && i < 8; ++i) {
        allocs += type_of(nodes[i]) == CU_GRAPH_NODE_TYPE_MEM_ALLOC;
        frees += type_of(nodes[i]) == CU_GRAPH_NODE_TYPE_MEM_FREE;
    }
    expect_true("one allocation and one free node captured", allocs == 1 && frees == 1 && count == 5);
    CUgraphExec e = nullptr;
    CU_CHECK(cuGraphInstantiateWithFlags(&e, g, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
    for (int launch = 0; launch < 2; ++launch) {
        clear(hc);
        expect("cuGraphLaunch(captured allocation)", cuGraphLaunch(e, s), CUDA_SUCCESS);
        CU_CHECK(cuStreamSynchronize(s));
        expect_true("2 + 1 through captured graph memory", all_are(hc, 3.0f));
    }
    CU_CHECK(cuGraphExecDestroy(e));
    CU_CHECK(cuGraphDestroy(g));

    CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUdeviceptr kept = 0;
    CU_CHECK(cuMemAllocAsync(&kept, kN * 4, s));
    CU_CHECK(cuMemsetD32Async(kept, 0x40e00000u /* 7.0f */, kN, s));
    CU_CHECK(cuStreamEndCapture(s, &g));
    CU_CHECK(cuGraphInstantiateWithFlags(&e, g, 0));
    CU_CHECK(cuGraphLaunch(e, s));
    CU_CHECK(cuStreamSynchronize(s));
    clear(hc);
    expect("cuMemcpyDtoH(a live graph allocation)", cuMemcpyDtoH(hc, kept, kN * 4), CUDA_SUCCESS);
    expect_true("what the graph wrote", all_are(hc, 7.0f));
    expect("cuMemFree(a graph allocation)", cuMemFree(kept), CUDA_SUCCESS);
    expect("cuGraphLaunch(after the free)", cuGraphLaunch(e, s), CUDA_SUCCESS);
    expect("cuMemFreeAsync(a graph allocation)", cuMemFreeAsync(kept, s), CUDA_SUCCESS);
    CU_CHECK(cuStreamSynchronize(s));
    CU_CHECK(cuGraphExecDestroy(e));
    CU_CHECK(cuGraphDestroy(g));
    expect("cuMemAllocAsync(not capturing) still works", cuMemAllocAsync(&da, 64, s), CUDA_SUCCESS);
    CU_CHECK(cuMemFreeAsync(da, s));
    CU_CHECK(cuStreamSynchronize(s));
    CU_CHECK(cuStreamDestroy(s));
}

// cuGraphAddNode's memory kinds, the attributes' settings and refusals.
void generic_nodes_and_attributes(CUdevice dev)
{
    CUgraph g = nullptr;
    CU_CHECK(cuGraphCreate(&g, 0));
    CUgraphNodeParams p = {};
    p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    p.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.alloc.poolProps.location = CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, dev};
    p.alloc.bytesize = 4096;
    CUgraphNode alloc = nullptr, release = nullptr;
    expect("cuGraphAddNode(MEM_ALLOC)", cuGraphAddNode(&alloc, g, nullptr, nullptr, 0, &p), CUDA_SUCCESS);
    expect_true("its address given back", p.alloc.dptr != 0);
    CUgraphNodeParams f = {};
    f.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    f.free.dptr = p.alloc.dptr;
    expect("cuGraphAddNode(MEM_FREE)", cuGraphAddNode(&release, g, &alloc, nullptr, 1, &f), CUDA_SUCCESS);
    CUgraphExec e = nullptr;
    CU_CHECK(cuGraphInstantiateWithFlags(&e, g, 0));
    CU_CHECK(cuGraphLaunch(e, 0));
    CU_CHECK(cuStreamSynchronize(0));
    CU_CHECK(cuGraphExecDestroy(e));
    CU_CHECK(cuGraphDestroy(g));

    cuuint64_t zero = 0, five = 5;
    expect("cuDeviceSetGraphMemAttribute(USED_MEM_HIGH, 0)",
           cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero), CUDA_SUCCESS);
    expect_true("reset to what is held now",
                graph_memory(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH) == graph_memory(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT));
    expect("cuDeviceSetGraphMemAttribute(RESERVED_MEM_HIGH, 0)",
           cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero), CUDA_SUCCESS);
    expect("cuDeviceSetGraphMemAttribute(USED_MEM_HIGH, 5)",
           cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &five), CUDA_ERROR_INVALID_VALUE);
    expect("cuDeviceSetGraphMemAttribute(USED_MEM_CURRENT)",
           cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &zero), CUDA_ERROR_INVALID_VALUE);
    expect("cuDeviceGetGraphMemAttribute(null)",
           cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, nullptr), CUDA_ERROR_INVALID_VALUE);
    cuuint64_t v = 0;
    expect("cuDeviceGetGraphMemAttribute(no such device)",
           cuDeviceGetGraphMemAttribute(99, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &v), CUDA_ERROR_INVALID_DEVICE);
    expect("cuDeviceGraphMemTrim", cuDeviceGraphMemTrim(dev), CUDA_SUCCESS);
    expect("cuDeviceGraphMemTrim(no such device)", cuDeviceGraphMemTrim(99), CUDA_ERROR_INVALID_DEVICE);
}

// NVIDIA's graphMemoryNodes sample, explicitly built: a free node, then an
// allocation after it (the driver may give the freed address again), a
// kernel between two graph allocations, and copies of 1 MiB between graph
// memory and pageable guest memory on both sides of the free.
void freed_address_given_again(CUfunction add, CUdevice dev)
{
    constexpr unsigned kBig = 1u << 18, kBlock = 256;
    static float hin[kBig], hsq[kBig], hneg[kBig];
    for (unsigned i = 0; i < kBig; ++i)
        hin[i] = 1.0f;
    CUdeviceptr ones = 0;
    CU_CHECK(cuMemAlloc(&ones, kBig * 4));
    CU_CHECK(cuMemsetD32(ones, 0x3f800000u /* 1.0f */, kBig));
    CUgraph g = nullptr;
    CU_CHECK(cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS ap = alloc_params(dev, kBig * 4);
    CUgraphNode alloc_in = nullptr, alloc_sq = nullptr, alloc_neg = nullptr, copy_in = nullptr, sq_node = nullptr,
                copy_sq = nullptr, free_in = nullptr, neg_node = nullptr, free_sq = nullptr, copy_neg = nullptr,
                free_neg = nullptr;
    CU_CHECK(cuGraphAddMemAllocNode(&alloc_in, g, nullptr, 0, &ap));
    CUdeviceptr in = ap.dptr;
    CU_CHECK(cuGraphAddMemAllocNode(&alloc_sq, g, &alloc_in, 1, &ap));
    CUdeviceptr sq = ap.dptr;
    auto copy = [&](CUgraphNode* node, CUgraphNode dep, bool to_device, CUdeviceptr d, float* h) {
        CUDA_MEMCPY3D c = {};
        if (to_device)
            c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = h, c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = d;
        else
            c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = d, c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = h;
        c.WidthInBytes = kBig * 4, c.Height = 1, c.Depth = 1;
        expect("cuGraphAddMemcpyNode(graph memory, pageable guest memory)",
               cuGraphAddMemcpyNode(node, g, &dep, 1, &c, nullptr), CUDA_SUCCESS);
    };
    unsigned n = kBig;
    copy(&copy_in, alloc_sq, true, in, hin);
    void* sq_params[] = {&in, &ones, &sq, &n};
    CUDA_KERNEL_NODE_PARAMS kp = {add, kBig / kBlock, 1, 1, kBlock, 1, 1, 0, sq_params, nullptr, nullptr, nullptr};
    CU_CHECK(cuGraphAddKernelNode(&sq_node, g, &copy_in, 1, &kp));
    copy(&copy_sq, sq_node, false, sq, hsq);
    CU_CHECK(cuGraphAddMemFreeNode(&free_in, g, &sq_node, 1, in));
    CU_CHECK(cuGraphAddMemAllocNode(&alloc_neg, g, &free_in, 1, &ap));
    CUdeviceptr neg = ap.dptr;
    void* neg_params[] = {&sq, &ones, &neg, &n};
    kp.kernelParams = neg_params;
    CU_CHECK(cuGraphAddKernelNode(&neg_node, g, &alloc_neg, 1, &kp));
    const CUgraphNode before_free_sq[] = {copy_sq, neg_node};
    CU_CHECK(cuGraphAddMemFreeNode(&free_sq, g, before_free_sq, 2, sq));
    copy(&copy_neg, neg_node, false, neg, hneg);
    expect("cuGraphAddMemFreeNode(after its copy out)", cuGraphAddMemFreeNode(&free_neg, g, &copy_neg, 1, neg),
           CUDA_SUCCESS);
    CUgraphExec e = nullptr;
    CU_CHECK(cuGraphInstantiateWithFlags(&e, g, 0));
    CU_CHECK(cuGraphDestroy(g));
    for (int launch = 0; launch < 2; ++launch) {
        for (unsigned i = 0; i < kBig; ++i)
            hsq[i] = hneg[i] = 0;
        expect("cuGraphLaunch(an allocation after a free)", cuGraphLaunch(e, 0), CUDA_SUCCESS);
        expect("cuStreamSynchronize(an allocation after a free)", cuStreamSynchronize(0), CUDA_SUCCESS);
        bool ok_sq = true, ok_neg = true;
        for (unsigned i = 0; i < kBig; ++i)
            ok_sq &= hsq[i] == 2.0f, ok_neg &= hneg[i] == 3.0f;
        expect_true("1 + 1 out of graph memory", ok_sq);
        expect_true("2 + 1 into the allocation after the free", ok_neg);
    }
    CU_CHECK(cuGraphExecDestroy(e));
    CU_CHECK(cuMemFree(ones));
}

} // namespace

void graph_memory_calls(CUfunction add)
{
    auto* hc = static_cast<float*>(pinned_alloc(kN * 4));
    CUdevice dev = 0;
    CU_CHECK(cuCtxGetDevice(&dev));
    CUdeviceptr db = 0, dc = 0;
    CU_CHECK(cuMemAlloc(&db, kN * 4));
    CU_CHECK(cuMemAlloc(&dc, kN * 4));
    CU_CHECK(cuMemsetD32(db, 0x3f800000u /* 1.0f */, kN));
    explicit_nodes(add, dev, db, dc, hc);
    freed_address_given_again(add, dev);
    captured(add, db, dc, hc);
    generic_nodes_and_attributes(dev);
    CU_CHECK(cuMemFree(db));
    CU_CHECK(cuMemFree(dc));
}
