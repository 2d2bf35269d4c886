// Graph memory in the guest Driver API (guest_cuda_graphs.h): allocation
// and free nodes, cuMemAllocAsync/cuMemFreeAsync on a capturing stream (the
// capture's nodes, made by the driver on the VMM's side), the graph memory
// attributes. A graph allocation is recorded as a device allocation here
// (unified addressing finds it) and stays so: its address is the graph's
// until the graph goes, and a later allocation at the address replaces the
// record. The nodes this library added are kept, with their parameters,
// for the GetParams calls; a captured or cloned memory node is not known
// here (NOT_SUPPORTED).
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/graph_nodes.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

struct KeptMemoryNode {
    uint64_t graph, node; // node 0: a free entry
    bool alloc;           // else a free node
    CUdevice device;
    uint64_t bytes, dptr;
};
constexpr unsigned kMaxMemoryNodes = 128;
KeptMemoryNode g_memory_nodes[kMaxMemoryNodes];

void keep(uint64_t graph, CUgraphNode node, bool alloc, CUdevice device, uint64_t bytes, uint64_t dptr)
{
    for (KeptMemoryNode& k : g_memory_nodes)
        if (k.node == 0) {
            k = KeptMemoryNode{graph, handle_bits(node), alloc, device, bytes, dptr};
            return;
        }
}

const KeptMemoryNode* kept(CUgraphNode node, bool alloc)
{
    const uint64_t n = handle_bits(node);
    for (const KeptMemoryNode& k : g_memory_nodes)
        if (n != 0 && k.node == n && k.alloc == alloc)
            return &k;
    return nullptr;
}

// What the driver takes: pinned device memory of the current context's
// device, no export handles, access only by that device (read-write).
CUresult alloc_params_ok(const CUDA_MEM_ALLOC_NODE_PARAMS& p, CUdevice device)
{
    const CUmemPoolProps& pp = p.poolProps;
    if (p.bytesize == 0 || pp.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        pp.location.type != CU_MEM_LOCATION_TYPE_DEVICE || pp.location.id != device ||
        pp.win32SecurityAttributes != nullptr || (p.accessDescCount > 0 && p.accessDescs == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    if (pp.handleTypes != CU_MEM_HANDLE_TYPE_NONE)
        return CUDA_ERROR_NOT_SUPPORTED; // no IPC of graph memory, as the driver says
    for (size_t i = 0; i < p.accessDescCount; ++i) {
        const CUmemAccessDesc& a = p.accessDescs[i];
        if (a.location.type != CU_MEM_LOCATION_TYPE_DEVICE || a.location.id != device ||
            a.flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_NOT_SUPPORTED; // peer access to graph memory is not offered
    }
    return CUDA_SUCCESS;
}

} // namespace

namespace guest::cuda {

void graph_memory_forget_graph(uint64_t graph)
{
    for (KeptMemoryNode& k : g_memory_nodes)
        if (k.node != 0 && k.graph == graph)
            k.node = 0;
}

void graph_memory_forget_node(uint64_t node)
{
    for (KeptMemoryNode& k : g_memory_nodes)
        if (k.node == node)
            k.node = 0;
}

CUresult graph_allocation_captured(CUdeviceptr* dptr, size_t bytes, CUstream stream)
{
    uint64_t address = 0;
    if (CUresult r = call<VGPU_OP_MEM_ALLOC_CAPTURED>({stream_arg(stream), bytes}, &address))
        return r;
    graph_allocation_add(address, bytes);
    *dptr = address;
    return CUDA_SUCCESS;
}

CUresult graph_allocation_free(CUdeviceptr dptr, CUstream stream)
{
    return call<VGPU_OP_MEM_FREE_GRAPH_ALLOCATION>({stream_arg(stream), dptr});
}

} // namespace guest::cuda

KVMGPU_DRIVER_ENTRY(cuGraphAddMemAllocNode, 11040);
extern "C" CUresult cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                           size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams)
{
    GUEST_API_LOCK();
    if (nodeParams == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    CUdevice device = 0;
    if (CUresult r = cuCtxGetDevice(&device))
        return r;
    if (CUresult r = alloc_params_ok(*nodeParams, device))
        return r;
    Call c = command<VGPU_OP_GRAPH_ADD_MEM_ALLOC_NODE>({handle_bits(hGraph), nodeParams->bytesize});
    uint64_t dptr = 0;
    if (CUresult r = add_graph_node(c, phGraphNode, hGraph, dependencies, numDependencies, &dptr))
        return r;
    graph_allocation_add(dptr, nodeParams->bytesize);
    keep(handle_bits(hGraph), *phGraphNode, true, device, nodeParams->bytesize, dptr);
    nodeParams->dptr = dptr;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuGraphMemAllocNodeGetParams, 11040);
extern "C" CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* params_out)
{
    GUEST_API_LOCK();
    if (params_out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const KeptMemoryNode* k = kept(hNode, true);
    if (k == nullptr)
        return CUDA_ERROR_NOT_SUPPORTED; // captured, cloned, or not a memory node
    *params_out = CUDA_MEM_ALLOC_NODE_PARAMS{};
    params_out->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    params_out->poolProps.location = CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, k->device};
    params_out->bytesize = k->bytes;
    params_out->dptr = k->dptr;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuGraphAddMemFreeNode, 11040);
extern "C" CUresult cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                          size_t numDependencies, CUdeviceptr dptr)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_GRAPH_ADD_MEM_FREE_NODE>({handle_bits(hGraph), dptr});
    if (CUresult r = add_graph_node(c, phGraphNode, hGraph, dependencies, numDependencies))
        return r;
    keep(handle_bits(hGraph), *phGraphNode, false, 0, 0, dptr);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuGraphMemFreeNodeGetParams, 11040);
extern "C" CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out)
{
    GUEST_API_LOCK();
    if (dptr_out == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const KeptMemoryNode* k = kept(hNode, false);
    if (k == nullptr)
        return CUDA_ERROR_NOT_SUPPORTED;
    *dptr_out = k->dptr;
    return CUDA_SUCCESS;
}

// A hint: the VMM's backend keeps no graph memory a trim would give back
// sooner than the graphs' destruction does. The device is checked (a read
// of an attribute).
KVMGPU_DRIVER_ENTRY(cuDeviceGraphMemTrim, 11040);
extern "C" CUresult cuDeviceGraphMemTrim(CUdevice device)
{
    GUEST_API_LOCK();
    uint64_t ignored = 0;
    return call<VGPU_OP_GRAPH_MEM_ATTRIBUTE>({device_arg(device), 0, 0, 0}, &ignored);
}

KVMGPU_DRIVER_ENTRY(cuDeviceGetGraphMemAttribute, 11040);
extern "C" CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value)
{
    GUEST_API_LOCK();
    if (value == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t v = 0;
    if (CUresult r = call<VGPU_OP_GRAPH_MEM_ATTRIBUTE>({device_arg(device), static_cast<uint64_t>(attr), 0, 0}, &v))
        return r;
    *static_cast<cuuint64_t*>(value) = v;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuDeviceSetGraphMemAttribute, 11040);
extern "C" CUresult cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void* value)
{
    GUEST_API_LOCK();
    if (value == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const cuuint64_t v = *static_cast<const cuuint64_t*>(value);
    uint64_t ignored = 0;
    return call<VGPU_OP_GRAPH_MEM_ATTRIBUTE>({device_arg(device), static_cast<uint64_t>(attr), 1, v}, &ignored);
}
