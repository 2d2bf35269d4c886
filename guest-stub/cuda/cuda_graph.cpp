// CUDA graphs: each call is the vGPU's graph opcode of the same meaning
// (vgpu_abi.h, "graphs"); host nodes are this library's (graph_host_steps.h).
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/graph_host_steps.h"
#include "guest-stub/cuda/graph_kernel_params.h"
#include "guest-stub/cuda/graph_nodes.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/vgpu_client.h"
#include "guest-stub/platform/platform.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cuda;

namespace {

// A destroy call; on success `forget` drops what this library kept for the handle.
template <uint16_t Op>
CUresult destroy(uint64_t handle, void (*forget)(uint64_t))
{
    const CUresult r = call<Op>({handle});
    if (r == CUDA_SUCCESS)
        forget(handle);
    return r;
}

void forget_graph(uint64_t graph)
{
    host_steps_drop(graph);
    kernel_params_forget_graph(graph);
    graph_memory_forget_graph(graph);
}

void forget_node(uint64_t node)
{
    host_step_drop_node(node);
    kernel_params_forget_node(node);
    graph_memory_forget_node(node);
}

// Edges from[i] -> to[i] (to == nullptr: every one to `to_all`), sent in
// slot-sized batches. A host node with a device node after it is marked.
CUresult edges(uint64_t graph, const CUgraphNode* from, const CUgraphNode* to, uint64_t to_all, size_t n, bool remove)
{
    uint64_t pairs[VGPU_GRAPH_EDGES_PER_CALL * 2];
    for (size_t done = 0; done < n;) {
        const size_t batch = n - done < VGPU_GRAPH_EDGES_PER_CALL ? n - done : VGPU_GRAPH_EDGES_PER_CALL;
        for (size_t i = 0; i < batch; ++i) {
            pairs[2 * i] = handle_bits(from[done + i]);
            pairs[2 * i + 1] = to ? handle_bits(to[done + i]) : to_all;
        }
        Call c = command<VGPU_OP_GRAPH_DEPENDENCIES>({graph, batch, uint64_t{remove}});
        c.payload = pairs;
        c.payload_len = static_cast<uint32_t>(batch * 16);
        if (CUresult r = call_sync(c))
            return r;
        for (size_t i = 0; i < batch && !remove; ++i) {
            HostStep* f = host_step_of_node(pairs[2 * i]);
            if (f != nullptr && host_step_of_node(pairs[2 * i + 1]) == nullptr)
                f->device_after = true;
        }
        done += batch;
    }
    return CUDA_SUCCESS;
}

// A node the vGPU just made (res[0]) gets its dependencies as edges; undone if they fail.
CUresult with_dependencies(CUgraphNode* out, CUgraph graph, uint64_t node, const CUgraphNode* deps, size_t n)
{
    if (CUresult r = edges(handle_bits(graph), deps, nullptr, node, n, false)) {
        call<VGPU_OP_GRAPH_DESTROY_NODE>({node});
        return r;
    }
    *out = handle_of<CUgraphNode>(node);
    return CUDA_SUCCESS;
}

// The dependencies the graph's next node is made with, in slot-sized batches.
CUresult next_node_dependencies(CUgraph graph, const CUgraphNode* deps, size_t n)
{
    uint64_t handles[VGPU_GRAPH_NODES_PER_CALL];
    for (size_t done = 0; done < n;) {
        const size_t batch = n - done < VGPU_GRAPH_NODES_PER_CALL ? n - done : VGPU_GRAPH_NODES_PER_CALL;
        for (size_t i = 0; i < batch; ++i)
            handles[i] = handle_bits(deps[done + i]);
        Call c = command<VGPU_OP_GRAPH_NEXT_NODE_DEPENDENCIES>({handle_bits(graph), batch, uint64_t{done > 0}});
        c.payload = handles;
        c.payload_len = static_cast<uint32_t>(batch * 8);
        if (CUresult r = call_sync(c))
            return r;
        done += batch;
    }
    return CUDA_SUCCESS;
}

// A host node among a new device node's dependencies has a device node after it.
void device_node_after(const CUgraphNode* deps, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (HostStep* f = host_step_of_node(handle_bits(deps[i])))
            f->device_after = true;
}

} // namespace

CUresult guest::cuda::add_graph_node(Call& c, CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, size_t n,
                                     uint64_t* second, DependenciesAt when)
{
    if (out == nullptr || (n > 0 && deps == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    if (when == DependenciesAt::Creation && n > 0)
        if (CUresult r = next_node_dependencies(graph, deps, n))
            return r;
    uint64_t res[2];
    if (CUresult r = call_sync(c, res))
        return r;
    if (when == DependenciesAt::Creation) {
        device_node_after(deps, n);
        *out = handle_of<CUgraphNode>(res[0]);
    } else if (CUresult r = with_dependencies(out, graph, res[0], deps, n)) {
        return r;
    }
    if (second != nullptr)
        *second = res[1];
    return CUDA_SUCCESS;
}

namespace {

// A kernel-node command, checked and laid out before anything is sent: the
// launch shape, the parameter buffer laid out by the function's layout (as
// cuLaunchKernel's) in the slot or in the pinned scratch, and the exec
// (EXEC_KERNEL_NODE_SET_PARAMS).
struct KernelCall {
    alignas(16) vgpu_graph_kernel_payload payload;
    Call call;
    const FunctionLayout* layout = nullptr;
    uint8_t* buffer = nullptr;
};

CUresult prepare_kernel_call(uint16_t op, uint64_t target, uint64_t exec, const CUDA_KERNEL_NODE_PARAMS* p,
                             KernelCall* k)
{
    if (p == nullptr || (p->kernelParams != nullptr && p->extra != nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    if (p->func == nullptr)
        return CUDA_ERROR_NOT_SUPPORTED; // a CUkernel (library kernels) is not offered
    const FunctionLayout* l = function_find(p->func);
    if (l == nullptr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!kernel_shape_ok(*l, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ,
                         p->sharedMemBytes))
        return CUDA_ERROR_INVALID_VALUE;
    k->layout = l;
    k->payload.exec = exec;
    const bool inline_params = l->bytes <= sizeof k->payload.params;
    k->buffer = inline_params ? k->payload.params : param_scratch();
    if (k->buffer == nullptr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (CUresult r = pack_kernel_params(*l, p->kernelParams, p->extra, k->buffer))
        return r;
    uint32_t len = 8 + l->bytes;
    if (!inline_params) {
        const uint64_t gpa = reinterpret_cast<uintptr_t>(k->buffer); // the scratch: identity-mapped
        memcpy(k->payload.params, &gpa, sizeof gpa);
        len = 16;
    }
    const vgpu_launch_args a{handle_bits(p->func), target, {p->gridDimX, p->gridDimY, p->gridDimZ},
                             {p->blockDimX, p->blockDimY, p->blockDimZ}, p->sharedMemBytes, l->bytes};
    k->call.op = op;
    k->call.set_args(a);
    k->call.payload = &k->payload;
    k->call.payload_len = len;
    return CUDA_SUCCESS;
}

// Sends a node's new parameters (SET_PARAMS: target the node; EXEC_...: the
// node of the exec) and keeps a graph node's own copy.
CUresult set_kernel_node_params(uint16_t op, uint64_t target, uint64_t exec, const CUDA_KERNEL_NODE_PARAMS* p)
{
    KernelCall k;
    if (CUresult r = prepare_kernel_call(op, target, exec, p, &k))
        return r;
    if (CUresult r = call_sync(k.call)) // waited for: the vGPU has copied the scratch
        return r;
    if (op == VGPU_OP_GRAPH_KERNEL_NODE_SET_PARAMS)
        kernel_params_keep(0, target, *p, *k.layout, k.buffer); // an exec's copy changes nothing here
    return CUDA_SUCCESS;
}

// One side of a 1D copy: a device address, or guest RAM by its physical
// address. false: a kind of memory the vGPU's nodes do not take.
bool copy_end(CUmemorytype type, const void* host, CUdeviceptr device, size_t offset, size_t bytes, bool* on_device,
              uint64_t* address)
{
    if (type == CU_MEMORYTYPE_UNIFIED) { // one address: this guest's allocation, or its RAM
        if (allocation_contains(device, 0)) {
            type = CU_MEMORYTYPE_DEVICE;
        } else {
            type = CU_MEMORYTYPE_HOST;
            host = reinterpret_cast<const void*>(static_cast<uintptr_t>(device));
        }
    }
    *on_device = type == CU_MEMORYTYPE_DEVICE;
    if (*on_device) {
        *address = device + offset;
        return true;
    }
    return type == CU_MEMORYTYPE_HOST && host != nullptr &&
           guest::platform::phys_contiguous(static_cast<const uint8_t*>(host) + offset, bytes, address);
}

} // namespace

KVMGPU_DRIVER_ENTRY(cuGraphCreate, 10000);
extern "C" CUresult cuGraphCreate(CUgraph* phGraph, unsigned int flags)
{
    GUEST_API_LOCK();
    return call_create<VGPU_OP_GRAPH_CREATE>(flags, phGraph);
}

KVMGPU_DRIVER_ENTRY(cuGraphDestroy, 10000);
extern "C" CUresult cuGraphDestroy(CUgraph hGraph)
{
    GUEST_API_LOCK();
    return destroy<VGPU_OP_GRAPH_DESTROY>(handle_bits(hGraph), forget_graph);
}

KVMGPU_DRIVER_ENTRY(cuGraphAddEmptyNode, 10000);
extern "C" CUresult cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                        size_t numDependencies)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_GRAPH_ADD_EMPTY_NODE>({handle_bits(hGraph)});
    return add_graph_node(c, phGraphNode, hGraph, dependencies, numDependencies);
}

KVMGPU_DRIVER_ENTRY_AS(cuGraphAddKernelNode, 12000, cuGraphAddKernelNode_v2);
extern "C" CUresult cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                         size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS* nodeParams)
{
    GUEST_API_LOCK();
    // Checked and laid out before its dependencies are sent: they are for the next command only.
    KernelCall k;
    if (CUresult r = prepare_kernel_call(VGPU_OP_GRAPH_ADD_KERNEL_NODE, handle_bits(hGraph), 0, nodeParams, &k))
        return r;
    if (CUresult r = add_graph_node(k.call, phGraphNode, hGraph, dependencies, numDependencies))
        return r; // waited for: the vGPU has copied the scratch
    kernel_params_keep(handle_bits(hGraph), handle_bits(*phGraphNode), *nodeParams, *k.layout, k.buffer);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY_AS(cuGraphKernelNodeSetParams, 12000, cuGraphKernelNodeSetParams_v2);
extern "C" CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS* nodeParams)
{
    GUEST_API_LOCK();
    return set_kernel_node_params(VGPU_OP_GRAPH_KERNEL_NODE_SET_PARAMS, handle_bits(hNode), 0, nodeParams);
}

// What the node was given, with kernelParams pointing into this library's
// copy of its packed buffer (extra null): valid until the node's parameters
// are set again or it goes. A kernel node this library did not add (a
// captured one): CUDA_ERROR_NOT_SUPPORTED.
KVMGPU_DRIVER_ENTRY_AS(cuGraphKernelNodeGetParams, 12000, cuGraphKernelNodeGetParams_v2);
extern "C" CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS* nodeParams)
{
    GUEST_API_LOCK();
    if (nodeParams == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (kernel_params_of(handle_bits(hNode), nodeParams))
        return CUDA_SUCCESS;
    uint64_t type = 0;
    if (CUresult r = call<VGPU_OP_GRAPH_NODE_GET_TYPE>({handle_bits(hNode)}, &type))
        return r;
    return type == CU_GRAPH_NODE_TYPE_KERNEL ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
}

KVMGPU_DRIVER_ENTRY_AS(cuGraphExecKernelNodeSetParams, 12000, cuGraphExecKernelNodeSetParams_v2);
extern "C" CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_KERNEL_NODE_PARAMS* nodeParams)
{
    GUEST_API_LOCK();
    if (hGraphExec == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    return set_kernel_node_params(VGPU_OP_GRAPH_EXEC_KERNEL_NODE_SET_PARAMS, handle_bits(hNode),
                                  handle_bits(hGraphExec), nodeParams);
}

KVMGPU_DRIVER_ENTRY(cuGraphAddMemcpyNode, 10000);
extern "C" CUresult cuGraphAddMemcpyNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                         size_t numDependencies, const CUDA_MEMCPY3D* p, CUcontext)
{
    GUEST_API_LOCK();
    if (p == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const size_t bytes = p->WidthInBytes;
    if (p->Height > 1 || p->Depth > 1 || p->srcY || p->srcZ || p->dstY || p->dstZ || p->srcLOD || p->dstLOD)
        return CUDA_ERROR_NOT_SUPPORTED; // 2D and 3D copies: not offered
    bool src_device, dst_device;
    uint64_t src, dst;
    if (!copy_end(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, bytes, &src_device, &src) ||
        !copy_end(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, bytes, &dst_device, &dst) ||
        (!src_device && !dst_device))
        return CUDA_ERROR_NOT_SUPPORTED; // arrays, host to host, or pageable memory without one range
    Call c = command<VGPU_OP_GRAPH_ADD_MEMCPY_NODE>(
        {handle_bits(hGraph), !src_device ? VGPU_OP_MEMCPY_HTOD : !dst_device ? VGPU_OP_MEMCPY_DTOH : VGPU_OP_MEMCPY_DTOD, dst, src, bytes});
    return add_graph_node(c, phGraphNode, hGraph, dependencies, numDependencies);
}

KVMGPU_DRIVER_ENTRY(cuGraphAddMemsetNode, 10000);
extern "C" CUresult cuGraphAddMemsetNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                         size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS* p, CUcontext)
{
    GUEST_API_LOCK();
    if (p == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->height > 1)
        return CUDA_ERROR_NOT_SUPPORTED; // 2D memsets: not offered
    Call c = command<VGPU_OP_GRAPH_ADD_MEMSET_NODE>({handle_bits(hGraph), p->dst, p->value, p->elementSize, p->width});
    return add_graph_node(c, phGraphNode, hGraph, dependencies, numDependencies);
}

KVMGPU_DRIVER_ENTRY(cuGraphAddHostNode, 10000);
extern "C" CUresult cuGraphAddHostNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                       size_t numDependencies, const CUDA_HOST_NODE_PARAMS* p)
{
    GUEST_API_LOCK();
    if (p == nullptr || p->fn == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraphNode node;
    if (CUresult r = cuGraphAddEmptyNode(&node, hGraph, dependencies, numDependencies))
        return r;
    if (host_step_add(handle_bits(hGraph), handle_bits(node), p->fn, p->userData) == nullptr) {
        cuGraphDestroyNode(node);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *phGraphNode = node;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuGraphHostNodeGetParams, 10000);
extern "C" CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS* p)
{
    GUEST_API_LOCK();
    const HostStep* s = host_step_of_node(handle_bits(hNode));
    if (s == nullptr || p == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *p = CUDA_HOST_NODE_PARAMS{s->fn, s->data};
    return CUDA_SUCCESS;
}

// The graph's node only: an exec instantiated before keeps its copy.
KVMGPU_DRIVER_ENTRY(cuGraphHostNodeSetParams, 10000);
extern "C" CUresult cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS* p)
{
    GUEST_API_LOCK();
    HostStep* s = host_step_of_node(handle_bits(hNode));
    if (s == nullptr || p == nullptr || p->fn == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    s->fn = p->fn, s->data = p->userData;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY_AS(cuGraphAddDependencies, 12030, cuGraphAddDependencies_v2);
extern "C" CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                           const CUgraphEdgeData* edgeData, size_t numDependencies)
{
    GUEST_API_LOCK();
    if (numDependencies > 0 && (from == nullptr || to == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    if (!default_edges(edgeData, numDependencies))
        return CUDA_ERROR_NOT_SUPPORTED;
    return edges(handle_bits(hGraph), from, to, 0, numDependencies, false);
}

KVMGPU_DRIVER_ENTRY_AS(cuGraphRemoveDependencies, 12030, cuGraphRemoveDependencies_v2);
extern "C" CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                              const CUgraphEdgeData*, size_t numDependencies)
{
    GUEST_API_LOCK();
    if (numDependencies > 0 && (from == nullptr || to == nullptr))
        return CUDA_ERROR_INVALID_VALUE;
    return edges(handle_bits(hGraph), from, to, 0, numDependencies, true);
}

KVMGPU_DRIVER_ENTRY(cuGraphGetNodes, 10000);
extern "C" CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes)
{
    GUEST_API_LOCK();
    if (numNodes == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    const size_t room = nodes == nullptr ? 0 : *numNodes;
    size_t total = 0, got = 0;
    do {
        Call c = command<VGPU_OP_GRAPH_GET_NODES>({handle_bits(hGraph), got});
        uint64_t res[2], handles[VGPU_GRAPH_NODES_PER_CALL];
        if (CUresult r = call_sync(c, res, handles, sizeof handles))
            return r;
        total = res[0];
        for (size_t i = 0; i < VGPU_GRAPH_NODES_PER_CALL && got < total && got < room; ++i)
            nodes[got++] = handle_of<CUgraphNode>(handles[i]);
    } while (got < total && got < room);
    for (size_t i = got; i < room; ++i)
        nodes[i] = nullptr; // as the driver leaves the room past the last node
    *numNodes = nodes == nullptr ? total : got;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuGraphDestroyNode, 10000);
extern "C" CUresult cuGraphDestroyNode(CUgraphNode hNode)
{
    GUEST_API_LOCK();
    return destroy<VGPU_OP_GRAPH_DESTROY_NODE>(handle_bits(hNode), forget_node);
}

KVMGPU_DRIVER_ENTRY(cuGraphInstantiateWithFlags, 11040);
extern "C" CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    GUEST_API_LOCK();
    if (phGraphExec == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (host_steps_blocked(handle_bits(hGraph))) {
        host_step_order_refused("cuGraphInstantiate");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    Call c = command<VGPU_OP_GRAPH_INSTANTIATE>({handle_bits(hGraph), flags});
    uint64_t res[2];
    if (CUresult r = call_sync(c, res))
        return r;
    if (!host_steps_give(handle_bits(hGraph), res[0], true)) {
        host_steps_drop(res[0]);
        call<VGPU_OP_GRAPH_EXEC_DESTROY>({res[0]});
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *phGraphExec = handle_of<CUgraphExec>(res[0]);
    return CUDA_SUCCESS;
}

// Instantiated as cuGraphInstantiateWithFlags; UPLOAD then uploads to the
// stream. The reason a refusal gives is CUDA_GRAPH_INSTANTIATE_ERROR (the
// vGPU's status says why; no node is named).
KVMGPU_DRIVER_ENTRY(cuGraphInstantiateWithParams, 12000);
extern "C" CUresult cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                 CUDA_GRAPH_INSTANTIATE_PARAMS* p)
{
    GUEST_API_LOCK();
    if (p == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    p->hErrNode_out = nullptr;
    p->result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
    const bool upload = (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) != 0;
    if (CUresult r = cuGraphInstantiateWithFlags(phGraphExec, hGraph, p->flags & ~CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD))
        return r;
    if (upload) {
        if (CUresult r = cuGraphUpload(*phGraphExec, p->hUploadStream)) {
            cuGraphExecDestroy(*phGraphExec);
            return r;
        }
    }
    p->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuGraphExecHostNodeSetParams, 10020);
extern "C" CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                 const CUDA_HOST_NODE_PARAMS* p)
{
    GUEST_API_LOCK();
    HostStep* s = host_step_in(handle_bits(hGraphExec), handle_bits(hNode));
    if (s == nullptr || p == nullptr || p->fn == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    s->fn = p->fn, s->data = p->userData;
    return CUDA_SUCCESS;
}

// Queued as any launch; a graph with host nodes then waits for the stream
// and runs them (guest_cuda_graphs.h).
KVMGPU_DRIVER_ENTRY(cuGraphLaunch, 10000);
extern "C" CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    GUEST_API_LOCK();
    const uint64_t exec = handle_bits(hGraphExec);
    const bool host = host_steps_any(exec);
    if (host && capture_of(hStream) != 0)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; // its host functions could not run in order
    capture_note_work(hStream);
    Call c = command<VGPU_OP_GRAPH_LAUNCH>({exec, stream_arg(hStream)});
    if (!host)
        return managed_launch(c, hStream, false);
    if (CUresult r = managed_launch(c, hStream, false))
        return r;
    if (CUresult r = cuStreamSynchronize(hStream))
        return r;
    host_steps_run(exec);
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuGraphUpload, 11010);
extern "C" CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
    GUEST_API_LOCK();
    Call c = command<VGPU_OP_GRAPH_UPLOAD>({handle_bits(hGraphExec), stream_arg(hStream)});
    return call_async(c);
}

KVMGPU_DRIVER_ENTRY_AS(cuGraphExecUpdate, 12000, cuGraphExecUpdate_v2);
extern "C" CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo* info)
{
    GUEST_API_LOCK();
    if (info == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *info = CUgraphExecUpdateResultInfo{CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED, nullptr, nullptr};
    if (host_steps_blocked(handle_bits(hGraph)))
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    Call c = command<VGPU_OP_GRAPH_EXEC_UPDATE>({handle_bits(hGraphExec), handle_bits(hGraph)});
    uint64_t res[2] = {};
    const CUresult r = call_sync(c, res);
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
        info->result = static_cast<CUgraphExecUpdateResult>(res[0]);
    if (r == CUDA_SUCCESS) {
        host_steps_drop(handle_bits(hGraphExec));
        if (!host_steps_give(handle_bits(hGraph), handle_bits(hGraphExec), true))
            return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return r;
}

KVMGPU_DRIVER_ENTRY(cuGraphExecDestroy, 10000);
extern "C" CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    GUEST_API_LOCK();
    return destroy<VGPU_OP_GRAPH_EXEC_DESTROY>(handle_bits(hGraphExec), host_steps_drop);
}
