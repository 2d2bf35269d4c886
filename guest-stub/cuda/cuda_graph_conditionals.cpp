// Conditional nodes (CUDA 12.3), child graph nodes and the graph under a
// capture: a conditional's handle as the driver made it (kernels set it
// with cudaGraphSetConditional on the GPU), a conditional node's body
// graphs and a child graph node's copy of its child as handles of their
// own, a capture's graph and dependencies, and a capture into a graph of
// the program's.
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/graph_nodes.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"
#include "guest-stub/platform/platform.h"

using namespace guest::cuda;

namespace {

// cuStreamGetCaptureInfo's dependencies stay readable until the next call
// on this thread (the driver's rule is the next call on that stream). A
// capture's open ends are few (about one per stream joined to it); past
// this many the call is NOT_SUPPORTED rather than every thread carrying more.
constexpr size_t kMostDependencies = 256;
GUEST_PER_THREAD CUgraphNode t_dependencies[kMostDependencies];

// phGraph_out is the driver's array, valid while the node lives: here, room
// for the most recent bodies (a program reads them as the node is made; the
// room is reused after kBodyRoom more).
constexpr size_t kBodyRoom = 4096;
CUgraph g_body_room[kBodyRoom];
size_t g_body_next;

CUgraph* body_array(size_t n)
{
    if (g_body_next + n > kBodyRoom)
        g_body_next = 0;
    CUgraph* at = &g_body_room[g_body_next];
    g_body_next += n;
    return at;
}

// n node handles into the command's payload (at most VGPU_CAPTURE_DEPENDENCIES).
bool node_payload(const CUgraphNode* nodes, size_t n, uint64_t (&out)[VGPU_CAPTURE_DEPENDENCIES], Call* c)
{
    if (n > VGPU_CAPTURE_DEPENDENCIES || (n != 0 && nodes == nullptr))
        return false;
    for (size_t i = 0; i < n; ++i)
        out[i] = handle_bits(nodes[i]);
    c->payload = out;
    c->payload_len = static_cast<uint32_t>(n * 8);
    return true;
}

} // namespace

namespace guest::cuda {

CUresult add_conditional_node(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t n,
                              CUDA_CONDITIONAL_NODE_PARAMS* p)
{
    if (p->size == 0 || p->size > VGPU_CONDITIONAL_BODIES)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t bodies[VGPU_CONDITIONAL_BODIES] = {};
    Call c = command<VGPU_OP_GRAPH_ADD_CONDITIONAL_NODE>(
        {handle_bits(graph), p->handle, static_cast<uint64_t>(p->type), static_cast<uint64_t>(p->size)});
    uint64_t res[2];
    if (CUresult r = call_sync(c, res, bodies, sizeof bodies))
        return r;
    CUgraphNode made = handle_of<CUgraphNode>(res[0]);
    for (size_t i = 0; i < n; ++i) {
        if (CUresult r = cuGraphAddDependencies(graph, &deps[i], &made, nullptr, 1)) {
            cuGraphDestroyNode(made);
            return r;
        }
    }
    p->phGraph_out = body_array(p->size);
    for (unsigned i = 0; i < p->size; ++i)
        p->phGraph_out[i] = handle_of<CUgraph>(bodies[i]);
    *out = made;
    return CUDA_SUCCESS;
}

} // namespace guest::cuda

KVMGPU_DRIVER_ENTRY(cuGraphConditionalHandleCreate, 12030);
extern "C" CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle* pHandle_out, CUgraph hGraph,
                                                   CUcontext ctx, unsigned int defaultLaunchValue, unsigned int flags)
{
    GUEST_API_LOCK();
    if (pHandle_out == nullptr || hGraph == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    (void)ctx; // the graph's context: this VM's current one
    uint64_t h = 0;
    if (CUresult r = call<VGPU_OP_GRAPH_CONDITIONAL_CREATE>({handle_bits(hGraph), defaultLaunchValue, flags}, &h))
        return r;
    *pHandle_out = h;
    return CUDA_SUCCESS;
}

namespace guest::cuda {

// The active capture's graph and dependencies (every one, in this thread's array).
CUresult capture_graph_of(CUstream stream, CUgraph* graph, const CUgraphNode** deps, size_t* count)
{
    size_t total = 0;
    uint64_t page[VGPU_CAPTURE_DEPENDENCIES];
    for (size_t first = 0;;) {
        Call c = command<VGPU_OP_STREAM_CAPTURE_GRAPH>({stream_arg(stream), first});
        uint64_t res[2];
        if (CUresult r = call_sync(c, res, page, sizeof page))
            return r;
        total = res[1];
        if (total > kMostDependencies)
            return CUDA_ERROR_NOT_SUPPORTED; // more than this library keeps
        if (graph != nullptr)
            *graph = handle_of<CUgraph>(res[0]);
        const size_t got = total - first < VGPU_CAPTURE_DEPENDENCIES ? total - first : VGPU_CAPTURE_DEPENDENCIES;
        for (size_t i = 0; i < got; ++i)
            t_dependencies[first + i] = handle_of<CUgraphNode>(page[i]);
        first += got;
        if (first >= total)
            break;
    }
    if (deps != nullptr)
        *deps = total ? t_dependencies : nullptr;
    if (count != nullptr)
        *count = total;
    return CUDA_SUCCESS;
}

} // namespace guest::cuda

KVMGPU_DRIVER_ENTRY_AS(cuStreamUpdateCaptureDependencies, 12030, cuStreamUpdateCaptureDependencies_v2);
extern "C" CUresult cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode* dependencies,
                                                      const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                                      unsigned int flags)
{
    GUEST_API_LOCK();
    if (!default_edges(dependencyData, numDependencies))
        return CUDA_ERROR_NOT_SUPPORTED;
    uint64_t nodes[VGPU_CAPTURE_DEPENDENCIES];
    Call c = command<VGPU_OP_STREAM_UPDATE_CAPTURE_DEPENDENCIES>({stream_arg(hStream), numDependencies, flags});
    if (!node_payload(dependencies, numDependencies, nodes, &c))
        return numDependencies > VGPU_CAPTURE_DEPENDENCIES ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
    return call_sync(c);
}

KVMGPU_DRIVER_ENTRY(cuStreamBeginCaptureToGraph, 12030);
extern "C" CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode* dependencies,
                                                const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                                CUstreamCaptureMode mode)
{
    GUEST_API_LOCK();
    if (hGraph == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (!default_edges(dependencyData, numDependencies))
        return CUDA_ERROR_NOT_SUPPORTED;
    uint64_t nodes[VGPU_CAPTURE_DEPENDENCIES];
    Call c = command<VGPU_OP_STREAM_BEGIN_CAPTURE_TO_GRAPH>(
        {stream_arg(hStream), handle_bits(hGraph), static_cast<uint64_t>(mode), numDependencies});
    if (!node_payload(dependencies, numDependencies, nodes, &c))
        return numDependencies > VGPU_CAPTURE_DEPENDENCIES ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = call_sync(c))
        return r;
    uint64_t info[2]; // status, id
    if (CUresult r = call_sync(command<VGPU_OP_STREAM_CAPTURE_INFO>({stream_arg(hStream)}), info))
        return r;
    capture_began(hStream, info[1], true);
    return CUDA_SUCCESS;
}

// The child's host nodes would not come along (they run in this library):
// a child that has any is not offered.
KVMGPU_DRIVER_ENTRY(cuGraphAddChildGraphNode, 10000);
extern "C" CUresult cuGraphAddChildGraphNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                             size_t numDependencies, CUgraph childGraph)
{
    GUEST_API_LOCK();
    if (phGraphNode == nullptr || hGraph == nullptr || childGraph == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (host_steps_any(handle_bits(childGraph)))
        return CUDA_ERROR_NOT_SUPPORTED;
    Call c = command<VGPU_OP_GRAPH_ADD_CHILD_GRAPH_NODE>({handle_bits(hGraph), handle_bits(childGraph)});
    return add_graph_node(c, phGraphNode, hGraph, dependencies, numDependencies, nullptr, DependenciesAt::Edges);
}

KVMGPU_DRIVER_ENTRY(cuGraphChildGraphNodeGetGraph, 10000);
extern "C" CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph* phGraph)
{
    GUEST_API_LOCK();
    if (phGraph == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t g = 0;
    if (CUresult r = call<VGPU_OP_GRAPH_CHILD_GRAPH>({handle_bits(hNode)}, &g))
        return r;
    *phGraph = handle_of<CUgraph>(g);
    return CUDA_SUCCESS;
}
