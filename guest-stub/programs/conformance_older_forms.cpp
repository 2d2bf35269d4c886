// conformance, continued: the calls' older forms, asked of cuGetProcAddress
// at their versions and called with their signatures, as a runtime of CUDA
// 10 to 12 calls them (cuda_older_forms.cpp): each must act as its newest form.
#include "guest-stub/programs/conformance.h"

using namespace guest;

namespace {

template <class Fn>
Fn older(const char* name, int version)
{
    void* p = nullptr;
    if (cuGetProcAddress(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, nullptr) != CUDA_SUCCESS)
        p = nullptr;
    expect_true(name, p != nullptr);
    return reinterpret_cast<Fn>(p);
}

using Edges10 = CUresult (*)(CUgraph, CUgraphNode*, CUgraphNode*, size_t*);
using Deps10 = CUresult (*)(CUgraph, const CUgraphNode*, const CUgraphNode*, size_t);
using NodeList10 = CUresult (*)(CUgraphNode, CUgraphNode*, size_t*);

size_t edge_count(CUgraph g)
{
    size_t n = 0;
    if (auto get_edges = older<Edges10>("cuGraphGetEdges", 10000))
        expect("cuGraphGetEdges at 10.0 (a count)", get_edges(g, nullptr, nullptr, &n), CUDA_SUCCESS);
    return n;
}

void older_graph_calls()
{
    CUgraph g = nullptr;
    CUgraphNode a = nullptr, b = nullptr;
    CU_CHECK(cuGraphCreate(&g, 0));
    CU_CHECK(cuGraphAddEmptyNode(&a, g, nullptr, 0));
    CU_CHECK(cuGraphAddEmptyNode(&b, g, nullptr, 0));
    if (auto add = older<Deps10>("cuGraphAddDependencies", 10000))
        expect("cuGraphAddDependencies at 10.0", add(g, &a, &b, 1), CUDA_SUCCESS);
    CUgraphNode from[2] = {}, to[2] = {};
    size_t n = 2;
    if (auto get_edges = older<Edges10>("cuGraphGetEdges", 10000))
        expect("cuGraphGetEdges at 10.0", get_edges(g, from, to, &n), CUDA_SUCCESS);
    expect_true("cuGraphGetEdges at 10.0: the edge a -> b", n == 1 && from[0] == a && to[0] == b);
    CUgraphNode other = nullptr;
    n = 1;
    if (auto deps = older<NodeList10>("cuGraphNodeGetDependencies", 10000))
        expect("cuGraphNodeGetDependencies at 10.0", deps(b, &other, &n), CUDA_SUCCESS);
    expect_true("cuGraphNodeGetDependencies at 10.0: b waits for a", n == 1 && other == a);
    n = 1;
    if (auto dependents = older<NodeList10>("cuGraphNodeGetDependentNodes", 10000))
        expect("cuGraphNodeGetDependentNodes at 10.0", dependents(a, &other, &n), CUDA_SUCCESS);
    expect_true("cuGraphNodeGetDependentNodes at 10.0: a comes before b", n == 1 && other == b);

    CUgraphExec e = nullptr;
    CU_CHECK(cuGraphInstantiateWithFlags(&e, g, 0));
    using Update102 = CUresult (*)(CUgraphExec, CUgraph, CUgraphNode*, CUgraphExecUpdateResult*);
    CUgraphNode error_node = a;
    CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_ERROR;
    if (auto update = older<Update102>("cuGraphExecUpdate", 10020))
        expect("cuGraphExecUpdate at 10.2", update(e, g, &error_node, &result), CUDA_SUCCESS);
    expect_true("cuGraphExecUpdate at 10.2: SUCCESS, no error node",
                result == CU_GRAPH_EXEC_UPDATE_SUCCESS && error_node == nullptr);
    if (auto update = older<Update102>("cuGraphExecUpdate", 10020))
        expect("cuGraphExecUpdate at 10.2 (null outputs)", update(e, g, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
    CU_CHECK(cuGraphExecDestroy(e));

    if (auto remove = older<Deps10>("cuGraphRemoveDependencies", 10000))
        expect("cuGraphRemoveDependencies at 10.0", remove(g, &a, &b, 1), CUDA_SUCCESS);
    expect_true("cuGraphRemoveDependencies at 10.0: no edge left", edge_count(g) == 0);
    CU_CHECK(cuGraphDestroy(g));
}

void older_capture_calls()
{
    CUstream s = nullptr;
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    using Begin10 = CUresult (*)(CUstream);
    if (auto begin = older<Begin10>("cuStreamBeginCapture", 10000))
        expect("cuStreamBeginCapture at 10.0", begin(s), CUDA_SUCCESS);
    using Info101 = CUresult (*)(CUstream, CUstreamCaptureStatus*, cuuint64_t*);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    if (auto info = older<Info101>("cuStreamGetCaptureInfo", 10010))
        expect("cuStreamGetCaptureInfo at 10.1", info(s, &status, &id), CUDA_SUCCESS);
    expect_true("cuStreamGetCaptureInfo at 10.1: capturing, with an id", status == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0);
    using Info113 = CUresult (*)(CUstream, CUstreamCaptureStatus*, cuuint64_t*, CUgraph*, const CUgraphNode**, size_t*);
    status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id2 = 0;
    if (auto info = older<Info113>("cuStreamGetCaptureInfo", 11030)) {
        expect("cuStreamGetCaptureInfo at 11.3", info(s, &status, &id2, nullptr, nullptr, nullptr), CUDA_SUCCESS);
        // As the newest form answers: the graph under capture, named.
        CUgraph graph = nullptr;
        expect("cuStreamGetCaptureInfo at 11.3 (the graph)", info(s, &status, nullptr, &graph, nullptr, nullptr),
               CUDA_SUCCESS);
        expect_true("cuStreamGetCaptureInfo at 11.3: a graph", graph != nullptr);
    }
    expect_true("cuStreamGetCaptureInfo at 11.3: capturing, the same id", status == CU_STREAM_CAPTURE_STATUS_ACTIVE && id2 == id);
    CUgraph captured = nullptr;
    CU_CHECK(cuStreamEndCapture(s, &captured));
    CU_CHECK(cuGraphDestroy(captured));
    CU_CHECK(cuStreamDestroy(s));
}

void older_context_calls()
{
    CUcontext current = nullptr, made = nullptr;
    CU_CHECK(cuCtxGetCurrent(&current));
    using Create32 = CUresult (*)(CUcontext*, unsigned int, CUdevice);
    if (auto create = older<Create32>("cuCtxCreate", 3020))
        expect("cuCtxCreate at 3.2", create(&made, 0, 0), CUDA_SUCCESS);
    if (made != nullptr)
        CU_CHECK(cuCtxDestroy(made));
    made = nullptr;
    using Create114 = CUresult (*)(CUcontext*, void*, int, unsigned int, CUdevice);
    if (auto create = older<Create114>("cuCtxCreate", 11040)) {
        expect("cuCtxCreate at 11.4 (no affinity)", create(&made, nullptr, 0, 0, 0), CUDA_SUCCESS);
        if (made != nullptr)
            CU_CHECK(cuCtxDestroy(made));
        int affinity[4] = {};
        expect("cuCtxCreate at 11.4 (an affinity)", create(&made, affinity, 1, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
    }
    CU_CHECK(cuCtxSetCurrent(current));

    using GetProc113 = CUresult (*)(const char*, void**, int, cuuint64_t);
    void* init = nullptr;
    if (auto get = older<GetProc113>("cuGetProcAddress", 11030))
        expect("cuGetProcAddress at 11.3 (no status)", get("cuInit", &init, 13000, 0), CUDA_SUCCESS);
    expect_true("cuGetProcAddress at 11.3: cuInit", init == reinterpret_cast<void*>(&cuInit));
}

} // namespace

void older_form_calls()
{
    older_graph_calls();
    older_capture_calls();
    older_context_calls();
}
