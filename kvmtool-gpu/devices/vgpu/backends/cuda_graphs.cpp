#include "kvmtool-gpu/devices/vgpu/backends/cuda_graphs.h"

#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"

namespace kvmgpu::vgpu {

namespace {
CUstream stream(BackendStream s) { return reinterpret_cast<CUstream>(s); }
CUgraph graph(BackendGraph g) { return reinterpret_cast<CUgraph>(g); }
CUgraphNode node(BackendGraphNode n) { return reinterpret_cast<CUgraphNode>(n); }
CUgraphExec exec(BackendGraphExec e) { return reinterpret_cast<CUgraphExec>(e); }

// The node's kernel with its buffer as cuLaunchKernel's `extra` (the
// driver copies it during the call). `extra` and `bytes` are the caller's
// storage, alive for that call.
CUDA_KERNEL_NODE_PARAMS kernel_params(const GraphNodeSpec& spec, void* (&extra)[5], size_t& bytes) {
    bytes = spec.params.size();
    extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    extra[1] = const_cast<uint8_t*>(spec.params.data());
    extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    extra[3] = &bytes;
    extra[4] = CU_LAUNCH_PARAM_END;
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = reinterpret_cast<CUfunction>(spec.function);
    p.gridDimX = spec.grid.x, p.gridDimY = spec.grid.y, p.gridDimZ = spec.grid.z;
    p.blockDimX = spec.block.x, p.blockDimY = spec.block.y, p.blockDimZ = spec.block.z;
    p.sharedMemBytes = spec.shared_bytes;
    p.extra = bytes ? extra : nullptr; // a kernel without parameters takes neither
    return p;
}
} // namespace

bool CudaGraphs::available() const {
    return api_.cuStreamBeginCapture && api_.cuStreamEndCapture && api_.cuStreamGetCaptureInfo && api_.cuGraphCreate &&
           api_.cuGraphDestroy && api_.cuGraphAddKernelNode && api_.cuGraphKernelNodeSetParams &&
           api_.cuGraphExecKernelNodeSetParams && api_.cuGraphAddMemcpyNode && api_.cuGraphAddMemsetNode &&
           api_.cuGraphAddEmptyNode && api_.cuGraphAddDependencies && api_.cuGraphRemoveDependencies &&
           api_.cuGraphGetNodes && api_.cuGraphDestroyNode && api_.cuGraphInstantiateWithFlags && api_.cuGraphLaunch &&
           api_.cuGraphUpload && api_.cuGraphExecUpdate && api_.cuGraphExecDestroy;
}

Status CudaGraphs::begin_capture(BackendStream s, uint32_t mode) {
    return to_status(api_.cuStreamBeginCapture(stream(s), static_cast<CUstreamCaptureMode>(mode)));
}

Status CudaGraphs::end_capture(BackendStream s, BackendGraph* out) {
    CUgraph g = nullptr;
    CU_TRY(api_.cuStreamEndCapture(stream(s), &g));
    *out = reinterpret_cast<BackendGraph>(g);
    return VGPU_SUCCESS;
}

Status CudaGraphs::capture_status(BackendStream s, uint32_t* status, uint64_t* id) {
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t capture_id = 0;
    CU_TRY(api_.cuStreamGetCaptureInfo(stream(s), &st, &capture_id, nullptr, nullptr, nullptr, nullptr));
    *status = static_cast<uint32_t>(st);
    *id = st == CU_STREAM_CAPTURE_STATUS_NONE ? 0 : capture_id;
    return VGPU_SUCCESS;
}

Status CudaGraphs::graph_create(BackendGraph* out) {
    CUgraph g = nullptr;
    CU_TRY(api_.cuGraphCreate(&g, 0));
    *out = reinterpret_cast<BackendGraph>(g);
    return VGPU_SUCCESS;
}

Status CudaGraphs::graph_destroy(BackendGraph g) { return to_status(api_.cuGraphDestroy(graph(g))); }

Status CudaGraphs::add_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out) {
    CUgraphNode n = nullptr;
    const std::vector<CUgraphNode> deps = driver_nodes(spec.dependencies);
    switch (spec.kind) {
    case GraphNodeSpec::Kind::Empty: CU_TRY(api_.cuGraphAddEmptyNode(&n, graph(g), deps.data(), deps.size())); break;
    case GraphNodeSpec::Kind::Kernel: {
        void* extra[5];
        size_t bytes;
        const CUDA_KERNEL_NODE_PARAMS p = kernel_params(spec, extra, bytes);
        CU_TRY(api_.cuGraphAddKernelNode(&n, graph(g), deps.data(), deps.size(), &p));
        break;
    }
    case GraphNodeSpec::Kind::Memcpy: {
        CUDA_MEMCPY3D c{};
        if (spec.direction == VGPU_OP_MEMCPY_DTOH) {
            c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = spec.host;
        } else {
            c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = spec.dst;
        }
        if (spec.direction == VGPU_OP_MEMCPY_HTOD) {
            c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = spec.host;
        } else {
            c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = spec.src;
        }
        c.WidthInBytes = spec.bytes, c.Height = 1, c.Depth = 1;
        CU_TRY(api_.cuGraphAddMemcpyNode(&n, graph(g), deps.data(), deps.size(), &c, ctx_));
        break;
    }
    case GraphNodeSpec::Kind::Memset: {
        CUDA_MEMSET_NODE_PARAMS m{};
        m.dst = spec.dst, m.value = spec.value, m.elementSize = spec.element_bytes;
        m.width = spec.count, m.height = 1, m.pitch = 0;
        CU_TRY(api_.cuGraphAddMemsetNode(&n, graph(g), deps.data(), deps.size(), &m, ctx_));
        break;
    }
    case GraphNodeSpec::Kind::EventRecord:
    case GraphNodeSpec::Kind::EventWait: return add_event_node(g, spec, out);
    case GraphNodeSpec::Kind::MemFree: return add_free_node(g, spec, out);
    case GraphNodeSpec::Kind::Conditional: // add_conditional_node's
    case GraphNodeSpec::Kind::ChildGraph: return VGPU_ERROR_INVALID_VALUE; // add_child_graph_node's
    case GraphNodeSpec::Kind::MemAlloc: return VGPU_ERROR_INVALID_VALUE; // add_alloc_node makes these
    }
    *out = reinterpret_cast<BackendGraphNode>(n);
    return VGPU_SUCCESS;
}

Status CudaGraphs::set_kernel_params(BackendGraphExec e, BackendGraphNode n, const GraphNodeSpec& spec) {
    void* extra[5];
    size_t bytes;
    const CUDA_KERNEL_NODE_PARAMS p = kernel_params(spec, extra, bytes);
    return to_status(e ? api_.cuGraphExecKernelNodeSetParams(exec(e), node(n), &p)
                       : api_.cuGraphKernelNodeSetParams(node(n), &p));
}

Status CudaGraphs::dependency(BackendGraph g, BackendGraphNode from, BackendGraphNode to, bool remove) {
    const CUgraphNode f = node(from), t = node(to);
    return to_status(remove ? api_.cuGraphRemoveDependencies(graph(g), &f, &t, nullptr, 1)
                            : api_.cuGraphAddDependencies(graph(g), &f, &t, nullptr, 1));
}

Status CudaGraphs::nodes(BackendGraph g, std::vector<BackendGraphNode>* out) {
    size_t count = 0;
    CU_TRY(api_.cuGraphGetNodes(graph(g), nullptr, &count));
    std::vector<CUgraphNode> nodes(count);
    CU_TRY(api_.cuGraphGetNodes(graph(g), nodes.data(), &count));
    out->clear();
    for (size_t i = 0; i < count && i < nodes.size(); ++i) out->push_back(reinterpret_cast<BackendGraphNode>(nodes[i]));
    return VGPU_SUCCESS;
}

Status CudaGraphs::destroy_node(BackendGraphNode n) { return to_status(api_.cuGraphDestroyNode(node(n))); }

Status CudaGraphs::edges(BackendGraph g, std::vector<std::pair<BackendGraphNode, BackendGraphNode>>* out) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuGraphGetEdges, 12030);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    size_t count = 0;
    CU_TRY(fn(graph(g), nullptr, nullptr, nullptr, &count));
    std::vector<CUgraphNode> from(count), to(count);
    // No edge data asked for: the guest adds none but default edges (a
    // capture's programmatic ones would make this LOSSY_QUERY).
    CU_TRY(fn(graph(g), from.data(), to.data(), nullptr, &count));
    out->clear();
    for (size_t i = 0; i < count && i < from.size(); ++i)
        out->emplace_back(reinterpret_cast<BackendGraphNode>(from[i]), reinterpret_cast<BackendGraphNode>(to[i]));
    return VGPU_SUCCESS;
}

Status CudaGraphs::node_type(BackendGraphNode n, uint32_t* type) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuGraphNodeGetType, 10000);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
    CU_TRY(fn(node(n), &t));
    *type = static_cast<uint32_t>(t);
    return VGPU_SUCCESS;
}

Status CudaGraphs::clone(BackendGraph g, BackendGraph* out,
                        std::vector<std::pair<BackendGraphNode, BackendGraphNode>>* map) {
    const auto clone_fn = KVMGPU_CUDA_LATE(api_, cuGraphClone, 10000);
    const auto find_fn = KVMGPU_CUDA_LATE(api_, cuGraphNodeFindInClone, 10000);
    if (!clone_fn || !find_fn) return VGPU_ERROR_NOT_SUPPORTED;
    std::vector<BackendGraphNode> originals;
    if (const Status st = nodes(g, &originals); st != VGPU_SUCCESS) return st;
    CUgraph copy = nullptr;
    CU_TRY(clone_fn(&copy, graph(g)));
    map->clear();
    for (BackendGraphNode n : originals) {
        CUgraphNode c = nullptr;
        if (const CUresult r = find_fn(&c, node(n), copy); r != CUDA_SUCCESS) {
            api_.cuGraphDestroy(copy);
            return to_status(r);
        }
        map->emplace_back(n, reinterpret_cast<BackendGraphNode>(c));
    }
    *out = reinterpret_cast<BackendGraph>(copy);
    return VGPU_SUCCESS;
}

Status CudaGraphs::instantiate(BackendGraph g, uint64_t flags, BackendGraphExec* out) {
    CUgraphExec e = nullptr;
    CU_TRY(api_.cuGraphInstantiateWithFlags(&e, graph(g), flags));
    *out = reinterpret_cast<BackendGraphExec>(e);
    return VGPU_SUCCESS;
}

Status CudaGraphs::exec_destroy(BackendGraphExec e) { return to_status(api_.cuGraphExecDestroy(exec(e))); }

Status CudaGraphs::exec_update(BackendGraphExec e, BackendGraph g, uint32_t* result) {
    CUgraphExecUpdateResultInfo info{};
    const CUresult r = api_.cuGraphExecUpdate(exec(e), graph(g), &info);
    *result = static_cast<uint32_t>(info.result);
    return to_status(r);
}

Status CudaGraphs::launch(BackendGraphExec e, BackendStream s, bool upload_only) {
    return to_status(upload_only ? api_.cuGraphUpload(exec(e), stream(s)) : api_.cuGraphLaunch(exec(e), stream(s)));
}

} // namespace kvmgpu::vgpu
