// CudaBackend: the driver's occupancy calculator, the context's limits and
// P2P attributes, each one driver call on this backend's context.
#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"

namespace kvmgpu::vgpu {

Status CudaBackend::occupancy(BackendFunction f, uint32_t block, uint64_t dynamic_shared, uint32_t flags, int* out) {
    return to_status(api_.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        out, reinterpret_cast<CUfunction>(f), static_cast<int>(block), dynamic_shared, flags));
}

Status CudaBackend::available_shared(BackendFunction f, int blocks, int block, uint64_t* out) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuOccupancyAvailableDynamicSMemPerBlock, 10020);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    size_t bytes = 0;
    CU_TRY(fn(&bytes, reinterpret_cast<CUfunction>(f), blocks, block));
    *out = bytes;
    return VGPU_SUCCESS;
}

namespace {
// The shape as a CUlaunchConfig, `attr` its cluster where it has one.
CUlaunchConfig cluster_config(const ClusterShape& shape, CUlaunchAttribute* attr) {
    CUlaunchConfig config = launch_config(shape.grid, shape.block, shape.shared_bytes);
    if (shape.has_cluster) {
        attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr->value.clusterDim = {shape.cluster.x, shape.cluster.y, shape.cluster.z};
        config.attrs = attr;
        config.numAttrs = 1;
    }
    return config;
}
} // namespace

Status CudaBackend::max_active_clusters(BackendFunction f, const ClusterShape& shape, int* out) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuOccupancyMaxActiveClusters, 11070);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    CUlaunchAttribute attr{};
    const CUlaunchConfig config = cluster_config(shape, &attr);
    return to_status(fn(out, reinterpret_cast<CUfunction>(f), &config));
}

Status CudaBackend::max_cluster_size(BackendFunction f, const ClusterShape& shape, int* out) {
    const auto fn = KVMGPU_CUDA_LATE(api_, cuOccupancyMaxPotentialClusterSize, 11070);
    if (!fn) return VGPU_ERROR_NOT_SUPPORTED;
    CUlaunchAttribute attr{};
    const CUlaunchConfig config = cluster_config(shape, &attr);
    return to_status(fn(out, reinterpret_cast<CUfunction>(f), &config));
}

Status CudaBackend::get_limit(int limit, uint64_t* out) {
    size_t v = 0;
    CU_TRY(api_.cuCtxGetLimit(&v, static_cast<CUlimit>(limit)));
    *out = v;
    return VGPU_SUCCESS;
}

Status CudaBackend::set_limit(int limit, uint64_t value) {
    return to_status(api_.cuCtxSetLimit(static_cast<CUlimit>(limit), value));
}

// The driver answers for two distinct GPUs; two backends on one GPU
// (--gpus 0,0) are left to the default answer (DeviceBackends::p2p_attribute).
Status CudaBackend::peer_attribute(GpuBackend& peer, int attribute, int* out) {
    auto* other = dynamic_cast<CudaBackend*>(&peer);
    if (!other || other->dev_ == dev_) return VGPU_ERROR_NOT_SUPPORTED;
    return to_status(api_.cuDeviceGetP2PAttribute(out, static_cast<CUdevice_P2PAttribute>(attribute), dev_, other->dev_));
}

} // namespace kvmgpu::vgpu
