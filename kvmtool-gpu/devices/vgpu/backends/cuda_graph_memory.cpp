// Graph memory on the real driver: allocation and free nodes, and the
// stream-ordered calls that a capture turns into them. The driver keeps a
// node's address reserved while a graph or exec holds the node, so nothing
// is freed here when the device model releases one.
#include "kvmtool-gpu/devices/vgpu/backends/cuda_graphs.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"

namespace kvmgpu::vgpu {

Status CudaGraphs::add_alloc_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out, uint64_t* dptr) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuGraphAddMemAllocNode, 11040);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    CUDA_MEM_ALLOC_NODE_PARAMS p{};
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.poolProps.location.id = device_;
    p.bytesize = spec.bytes;
    CUgraphNode n = nullptr;
    const std::vector<CUgraphNode> deps = driver_nodes(spec.dependencies);
    CU_TRY(fn(&n, reinterpret_cast<CUgraph>(g), deps.data(), deps.size(), &p));
    *out = reinterpret_cast<BackendGraphNode>(n);
    *dptr = p.dptr;
    return VGPU_SUCCESS;
}

Status CudaGraphs::add_free_node(BackendGraph g, const GraphNodeSpec& spec, BackendGraphNode* out) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuGraphAddMemFreeNode, 11040);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    CUgraphNode n = nullptr;
    const std::vector<CUgraphNode> deps = driver_nodes(spec.dependencies);
    CU_TRY(fn(&n, reinterpret_cast<CUgraph>(g), deps.data(), deps.size(), spec.dst));
    *out = reinterpret_cast<BackendGraphNode>(n);
    return VGPU_SUCCESS;
}

Status CudaGraphs::alloc_in_capture(BackendStream s, uint64_t bytes, uint64_t* dptr) {
    if (!api_.cuMemAllocAsync) return VGPU_ERROR_NOT_SUPPORTED;
    CUdeviceptr p = 0;
    CU_TRY(api_.cuMemAllocAsync(&p, bytes, reinterpret_cast<CUstream>(s)));
    *dptr = p;
    return VGPU_SUCCESS;
}

Status CudaGraphs::free_graph_allocation(BackendStream s, uint64_t dptr) {
    if (!api_.cuMemFreeAsync) return VGPU_ERROR_NOT_SUPPORTED;
    return to_status(api_.cuMemFreeAsync(dptr, reinterpret_cast<CUstream>(s)));
}

} // namespace kvmgpu::vgpu
