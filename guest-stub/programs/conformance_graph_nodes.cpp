// conformance, continued: event record and wait nodes (added, read back,
// changed in the graph and in an exec, their event destroyed while named),
// nodes switched off in an exec, an exec's flags, and a kernel node's
// parameters read back (cuGraphKernelNodeGetParams, as simpleCudaGraphs and
// cuBLAS use it), and nodes of every kind by one call (cuGraphAddNode).
// `add` is vector_add(a, b, c, n).
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {

constexpr unsigned kN = 256;

void event_nodes(CUdeviceptr dc, float* hc)
{
    CUevent done = nullptr, ready = nullptr, other = nullptr;
    CU_CHECK(cuEventCreate(&done, 0));
    CU_CHECK(cuEventCreate(&ready, 0));
    CU_CHECK(cuEventCreate(&other, 0));
    CU_CHECK(cuEventRecord(ready, 0));
    CUgraph g = nullptr;
    CU_CHECK(cuGraphCreate(&g, 0));
    // wait(ready) -> memset dc = 3.0 -> copy to hc -> record(done)
    CUgraphNode wait = nullptr, set = nullptr, out = nullptr, record = nullptr;
    expect("cuGraphAddEventWaitNode", cuGraphAddEventWaitNode(&wait, g, nullptr, 0, ready), CUDA_SUCCESS);
    CUDA_MEMSET_NODE_PARAMS ms = {dc, 0, 0x40400000u /* 3.0f */, 4, kN, 1};
    CU_CHECK(cuGraphAddMemsetNode(&set, g, &wait, 1, &ms, nullptr));
    CUDA_MEMCPY3D back = {};
    back.srcMemoryType = CU_MEMORYTYPE_DEVICE, back.srcDevice = dc;
    back.dstMemoryType = CU_MEMORYTYPE_HOST, back.dstHost = hc;
    back.WidthInBytes = kN * 4, back.Height = 1, back.Depth = 1;
    CU_CHECK(cuGraphAddMemcpyNode(&out, g, &set, 1, &back, nullptr));
    expect("cuGraphAddEventRecordNode", cuGraphAddEventRecordNode(&record, g, &out, 1, done), CUDA_SUCCESS);
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    CU_CHECK(cuGraphNodeGetType(record, &type));
    expect_true("CU_GRAPH_NODE_TYPE_EVENT_RECORD", type == CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    CU_CHECK(cuGraphNodeGetType(wait, &type));
    expect_true("CU_GRAPH_NODE_TYPE_WAIT_EVENT", type == CU_GRAPH_NODE_TYPE_WAIT_EVENT);
    CUevent got = nullptr;
    expect("cuGraphEventRecordNodeGetEvent", cuGraphEventRecordNodeGetEvent(record, &got), CUDA_SUCCESS);
    expect_true("the recorded event", got == done);
    expect("cuGraphEventWaitNodeGetEvent", cuGraphEventWaitNodeGetEvent(wait, &got), CUDA_SUCCESS);
    expect_true("the awaited event", got == ready);
    expect("cuGraphEventWaitNodeGetEvent(a record node)", cuGraphEventWaitNodeGetEvent(record, &got),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuGraphEventRecordNodeSetEvent(a memset node)", cuGraphEventRecordNodeSetEvent(set, other),
           CUDA_ERROR_INVALID_VALUE);
    expect("cuGraphEventRecordNodeSetEvent", cuGraphEventRecordNodeSetEvent(record, other), CUDA_SUCCESS);
    CU_CHECK(cuGraphEventRecordNodeGetEvent(record, &got));
    expect_true("the event set", got == other);
    expect("cuGraphEventWaitNodeSetEvent", cuGraphEventWaitNodeSetEvent(wait, ready), CUDA_SUCCESS);
    CU_CHECK(cuGraphEventRecordNodeSetEvent(record, done));

    CUgraphExec exec = nullptr;
    CU_CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    cuuint64_t flags = 99;
    expect("cuGraphExecGetFlags", cuGraphExecGetFlags(exec, &flags), CUDA_SUCCESS);
    expect_true("flags 0", flags == 0);
    CUgraphExec auto_free = nullptr;
    CU_CHECK(cuGraphInstantiateWithFlags(&auto_free, g, 1 /* CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH */));
    CU_CHECK(cuGraphExecGetFlags(auto_free, &flags));
    expect_true("flags AUTO_FREE_ON_LAUNCH", flags == 1);
    hc[kN - 1] = 0;
    expect("cuGraphLaunch(event nodes)", cuGraphLaunch(exec, 0), CUDA_SUCCESS);
    expect("cuEventSynchronize(recorded by the graph)", cuEventSynchronize(done), CUDA_SUCCESS);
    expect_true("the graph's memset", hc[kN - 1] == 3.0f);

    // Switched off in the exec: dc keeps what the stream gave it since.
    unsigned on = 7;
    expect("cuGraphNodeGetEnabled", cuGraphNodeGetEnabled(exec, set, &on), CUDA_SUCCESS);
    expect_true("enabled", on == 1);
    expect("cuGraphNodeSetEnabled(off)", cuGraphNodeSetEnabled(exec, set, 0), CUDA_SUCCESS);
    CU_CHECK(cuGraphNodeGetEnabled(exec, set, &on));
    expect_true("disabled", on == 0);
    CU_CHECK(cuMemsetD32(dc, 0x40a00000 /* 5.0f */, kN));
    CU_CHECK(cuGraphLaunch(exec, 0));
    CU_CHECK(cuStreamSynchronize(0));
    expect_true("the memset skipped", hc[kN - 1] == 5.0f);
    expect("cuGraphNodeSetEnabled(on)", cuGraphNodeSetEnabled(exec, set, 1), CUDA_SUCCESS);
    CU_CHECK(cuGraphLaunch(exec, 0));
    CU_CHECK(cuStreamSynchronize(0));
    expect_true("the memset again", hc[kN - 1] == 3.0f);
    expect("cuGraphNodeSetEnabled(an event node)", cuGraphNodeSetEnabled(exec, record, 0), CUDA_ERROR_INVALID_VALUE);

    // The exec's copy records `other`; the graph's node keeps `done`.
    expect("cuGraphExecEventRecordNodeSetEvent", cuGraphExecEventRecordNodeSetEvent(exec, record, other),
           CUDA_SUCCESS);
    expect("cuGraphExecEventWaitNodeSetEvent", cuGraphExecEventWaitNodeSetEvent(exec, wait, ready), CUDA_SUCCESS);
    expect("cuGraphExecEventWaitNodeSetEvent(a record node)", cuGraphExecEventWaitNodeSetEvent(exec, record, ready),
           CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuGraphEventRecordNodeGetEvent(record, &got));
    expect_true("the graph's node unchanged", got == done);
    CU_CHECK(cuGraphLaunch(exec, 0));
    expect("cuEventSynchronize(recorded by the exec's node)", cuEventSynchronize(other), CUDA_SUCCESS);

    // `done` destroyed while nodes name it: the other exec still launches.
    CU_CHECK(cuEventDestroy(done));
    expect("cuGraphEventRecordNodeGetEvent(destroyed event)", cuGraphEventRecordNodeGetEvent(record, &got),
           CUDA_ERROR_INVALID_HANDLE);
    expect("cuGraphLaunch(a destroyed event's node)", cuGraphLaunch(auto_free, 0), CUDA_SUCCESS);
    expect("cuStreamSynchronize", cuStreamSynchronize(0), CUDA_SUCCESS);
    CU_CHECK(cuGraphExecDestroy(auto_free));
    CU_CHECK(cuGraphExecDestroy(exec));
    CU_CHECK(cuGraphDestroy(g));
    expect("cuGraphExecGetFlags(destroyed exec)", cuGraphExecGetFlags(exec, &flags), CUDA_ERROR_INVALID_HANDLE);
    CU_CHECK(cuEventDestroy(ready));
    CU_CHECK(cuEventDestroy(other));
}

void kernel_node_params(CUfunction add, CUdeviceptr da, CUdeviceptr db, CUdeviceptr dc, float* hc)
{
    CUgraph g = nullptr;
    CU_CHECK(cuGraphCreate(&g, 0));
    unsigned n = kN;
    CUdeviceptr x = da, y = db, out = dc;
    void* params[] = {&x, &y, &out, &n};
    CUDA_KERNEL_NODE_PARAMS kp = {add, 2, 1, 1, kN / 2, 1, 1, 0, params, nullptr, nullptr, nullptr};
    CUgraphNode sum = nullptr;
    CU_CHECK(cuGraphAddKernelNode(&sum, g, nullptr, 0, &kp));
    x = y = out = 0, n = 0; // the node keeps what it was given, not these
    CUDA_KERNEL_NODE_PARAMS got = {};
    expect("cuGraphKernelNodeGetParams", cuGraphKernelNodeGetParams(sum, &got), CUDA_SUCCESS);
    expect_true("its function and shape", got.func == add && got.gridDimX == 2 && got.gridDimY == 1 &&
                                               got.blockDimX == kN / 2 && got.sharedMemBytes == 0);
    expect_true("its parameters", got.kernelParams != nullptr &&
                                      *static_cast<CUdeviceptr*>(got.kernelParams[0]) == da &&
                                      *static_cast<CUdeviceptr*>(got.kernelParams[2]) == dc &&
                                      *static_cast<unsigned*>(got.kernelParams[3]) == kN);
    // cuBLAS's way: read, change one pointer, set.
    void* changed[] = {got.kernelParams[1], got.kernelParams[0], &db, got.kernelParams[3]}; // c = b + a into b
    got.kernelParams = changed;
    expect("cuGraphKernelNodeSetParams(from what was read)", cuGraphKernelNodeSetParams(sum, &got), CUDA_SUCCESS);
    CUDA_KERNEL_NODE_PARAMS again = {};
    CU_CHECK(cuGraphKernelNodeGetParams(sum, &again));
    expect_true("the parameters set", *static_cast<CUdeviceptr*>(again.kernelParams[0]) == db &&
                                          *static_cast<CUdeviceptr*>(again.kernelParams[2]) == db);
    CUgraph clone = nullptr;
    CU_CHECK(cuGraphClone(&clone, g));
    CUgraphNode sum2 = nullptr;
    CU_CHECK(cuGraphNodeFindInClone(&sum2, sum, clone));
    CUDA_KERNEL_NODE_PARAMS copied = {};
    expect("cuGraphKernelNodeGetParams(clone)", cuGraphKernelNodeGetParams(sum2, &copied), CUDA_SUCCESS);
    expect_true("the clone's own copy", copied.kernelParams != again.kernelParams &&
                                            *static_cast<CUdeviceptr*>(copied.kernelParams[2]) == db);
    CU_CHECK(cuMemsetD32(da, 0x40000000 /* 2.0f */, kN));
    CU_CHECK(cuMemsetD32(db, 0x3f800000 /* 1.0f */, kN));
    CUgraphExec exec = nullptr;
    CU_CHECK(cuGraphInstantiateWithFlags(&exec, clone, 0));
    CU_CHECK(cuGraphLaunch(exec, 0));
    CU_CHECK(cuMemcpyDtoH(hc, db, kN * 4));
    expect_true("the clone ran what was set", hc[0] == 3.0f && hc[kN - 1] == 3.0f);
    CU_CHECK(cuGraphExecDestroy(exec));
    CU_CHECK(cuGraphDestroy(clone));
    // Not a kernel node; a node destroyed.
    CUgraphNode empty = nullptr;
    CU_CHECK(cuGraphAddEmptyNode(&empty, g, nullptr, 0));
    expect("cuGraphKernelNodeGetParams(empty node)", cuGraphKernelNodeGetParams(empty, &got), CUDA_ERROR_INVALID_VALUE);
    expect("cuGraphKernelNodeGetParams(null)", cuGraphKernelNodeGetParams(sum, nullptr), CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuGraphDestroyNode(sum));
    expect("cuGraphKernelNodeGetParams(destroyed node)", cuGraphKernelNodeGetParams(sum, &got),
           CUDA_ERROR_INVALID_HANDLE);
    CU_CHECK(cuGraphDestroy(g));
}

// CUDA 12.2's one call for every kind: memset a = 2, memset b = 1 ->
// kernel c = a + b -> copy c to the host -> record `done`; a host node, then
// parameters changed through cuGraphNodeSetParams and cuGraphExecNodeSetParams.
void host_count(void* data) { ++*static_cast<int*>(data); }

void generic_nodes(CUfunction add, CUdeviceptr da, CUdeviceptr db, CUdeviceptr dc, float* hc)
{
    CUgraph g = nullptr;
    CU_CHECK(cuGraphCreate(&g, 0));
    CUgraphNodeParams p = {};
    p.type = CU_GRAPH_NODE_TYPE_MEMSET;
    p.memset = CUDA_MEMSET_NODE_PARAMS_v2{da, 0, 0x40000000u /* 2.0f */, 4, kN, 1, nullptr};
    CUgraphNode set_a = nullptr, set_b = nullptr, sum = nullptr, out = nullptr, record = nullptr, host = nullptr;
    expect("cuGraphAddNode(memset)", cuGraphAddNode(&set_a, g, nullptr, nullptr, 0, &p), CUDA_SUCCESS);
    p.memset.dst = db, p.memset.value = 0x3f800000u; // 1.0f
    CU_CHECK(cuGraphAddNode(&set_b, g, nullptr, nullptr, 0, &p));
    unsigned n = kN;
    CUdeviceptr x = da, y = db, z = dc;
    void* params[] = {&x, &y, &z, &n};
    p = {};
    p.type = CU_GRAPH_NODE_TYPE_KERNEL;
    p.kernel = CUDA_KERNEL_NODE_PARAMS{add, 2, 1, 1, kN / 2, 1, 1, 0, params, nullptr, nullptr, nullptr};
    const CUgraphNode sets[] = {set_a, set_b};
    expect("cuGraphAddNode(kernel)", cuGraphAddNode(&sum, g, sets, nullptr, 2, &p), CUDA_SUCCESS);
    p = {};
    p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    p.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_DEVICE, p.memcpy.copyParams.srcDevice = dc;
    p.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_HOST, p.memcpy.copyParams.dstHost = hc;
    p.memcpy.copyParams.WidthInBytes = kN * 4, p.memcpy.copyParams.Height = 1, p.memcpy.copyParams.Depth = 1;
    expect("cuGraphAddNode(memcpy)", cuGraphAddNode(&out, g, &sum, nullptr, 1, &p), CUDA_SUCCESS);
    CUevent done = nullptr, other = nullptr;
    CU_CHECK(cuEventCreate(&done, 0));
    CU_CHECK(cuEventCreate(&other, 0));
    p = {};
    p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    p.eventRecord.event = done;
    expect("cuGraphAddNode(event record)", cuGraphAddNode(&record, g, &out, nullptr, 1, &p), CUDA_SUCCESS);
    int ran = 0;
    p = {};
    p.type = CU_GRAPH_NODE_TYPE_HOST;
    p.host = CUDA_HOST_NODE_PARAMS{host_count, &ran};
    expect("cuGraphAddNode(host)", cuGraphAddNode(&host, g, &record, nullptr, 1, &p), CUDA_SUCCESS);
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    CU_CHECK(cuGraphNodeGetType(sum, &type));
    expect_true("cuGraphAddNode(kernel): a kernel node", type == CU_GRAPH_NODE_TYPE_KERNEL);

    CUgraphNodeParams bad = {};
    bad.type = CU_GRAPH_NODE_TYPE_GRAPH;
    bad.graph.graph = g;
    CUgraphNode child = nullptr;
    expect("cuGraphAddNode(child graph)", cuGraphAddNode(&child, g, nullptr, nullptr, 0, &bad), CUDA_ERROR_NOT_SUPPORTED);
    bad = {};
    bad.type = CU_GRAPH_NODE_TYPE_EMPTY;
    bad.reserved0[1] = 1;
    expect("cuGraphAddNode(reserved field set)", cuGraphAddNode(&child, g, nullptr, nullptr, 0, &bad),
           CUDA_ERROR_INVALID_VALUE);
    bad.reserved0[1] = 0;
    CUgraphEdgeData programmatic = {};
    programmatic.type = 1;
    expect("cuGraphAddNode(a programmatic edge)", cuGraphAddNode(&child, g, &host, &programmatic, 1, &bad),
           CUDA_ERROR_NOT_SUPPORTED);
    expect("cuGraphAddNode(null parameters)", cuGraphAddNode(&child, g, nullptr, nullptr, 0, nullptr),
           CUDA_ERROR_INVALID_VALUE);

    CUgraphExec exec = nullptr;
    CU_CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    hc[0] = hc[kN - 1] = 0;
    CU_CHECK(cuGraphLaunch(exec, 0));
    expect("cuEventSynchronize(recorded by a cuGraphAddNode node)", cuEventSynchronize(done), CUDA_SUCCESS);
    CU_CHECK(cuStreamSynchronize(0));
    expect_true("cuGraphAddNode's graph: c = 2 + 1, the host node once", hc[0] == 3.0f && hc[kN - 1] == 3.0f && ran == 1);

    // In the graph: the kernel now writes b + b into c; a kind that does not match is refused.
    p = {};
    p.type = CU_GRAPH_NODE_TYPE_KERNEL;
    x = db;
    p.kernel = CUDA_KERNEL_NODE_PARAMS{add, 2, 1, 1, kN / 2, 1, 1, 0, params, nullptr, nullptr, nullptr};
    expect("cuGraphNodeSetParams(kernel)", cuGraphNodeSetParams(sum, &p), CUDA_SUCCESS);
    expect("cuGraphNodeSetParams(kernel params on a host node)", cuGraphNodeSetParams(host, &p),
           CUDA_ERROR_INVALID_VALUE);
    CUDA_KERNEL_NODE_PARAMS got = {};
    CU_CHECK(cuGraphKernelNodeGetParams(sum, &got));
    expect_true("cuGraphNodeSetParams: the kernel node's parameters", *static_cast<CUdeviceptr*>(got.kernelParams[0]) == db);
    p = {};
    p.type = CU_GRAPH_NODE_TYPE_MEMSET;
    p.memset = CUDA_MEMSET_NODE_PARAMS_v2{da, 0, 0, 4, kN, 1, nullptr};
    expect("cuGraphNodeSetParams(memset)", cuGraphNodeSetParams(set_a, &p), CUDA_ERROR_NOT_SUPPORTED);
    // In the exec: record `other`, count twice.
    p = {};
    p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    p.eventRecord.event = other;
    expect("cuGraphExecNodeSetParams(event record)", cuGraphExecNodeSetParams(exec, record, &p), CUDA_SUCCESS);
    int ran_twice = 0;
    p = {};
    p.type = CU_GRAPH_NODE_TYPE_HOST;
    p.host = CUDA_HOST_NODE_PARAMS{host_count, &ran_twice};
    expect("cuGraphExecNodeSetParams(host)", cuGraphExecNodeSetParams(exec, host, &p), CUDA_SUCCESS);
    CU_CHECK(cuGraphLaunch(exec, 0));
    expect("cuEventSynchronize(the exec's event)", cuEventSynchronize(other), CUDA_SUCCESS);
    CU_CHECK(cuStreamSynchronize(0));
    expect_true("the exec's host node ran, the graph's was not changed", ran_twice == 1 && ran == 1);
    CU_CHECK(cuGraphExecDestroy(exec));
    CU_CHECK(cuGraphDestroy(g));
    CU_CHECK(cuEventDestroy(done));
    CU_CHECK(cuEventDestroy(other));
}

} // namespace

void graph_node_calls(CUfunction add)
{
    auto* hc = static_cast<float*>(pinned_alloc(kN * 4));
    CUdeviceptr da = 0, db = 0, dc = 0;
    CU_CHECK(cuMemAlloc(&da, kN * 4));
    CU_CHECK(cuMemAlloc(&db, kN * 4));
    CU_CHECK(cuMemAlloc(&dc, kN * 4));
    event_nodes(dc, hc);
    kernel_node_params(add, da, db, dc, hc);
    generic_nodes(add, da, db, dc, hc);
    CU_CHECK(cuMemFree(da));
    CU_CHECK(cuMemFree(db));
    CU_CHECK(cuMemFree(dc));
}
