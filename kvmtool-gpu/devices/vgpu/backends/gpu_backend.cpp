#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

#include <vector>

namespace kvmgpu::vgpu {

Status GpuBackend::launch(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                          std::span<void* const> params, std::span<const uint16_t> sizes, LaunchMode mode) {
    if (!launch_dims_ok(grid, block)) return VGPU_ERROR_INVALID_VALUE; // as a GPU refuses it
    return run_launch(f, grid, block, shared_bytes, s, params, sizes, mode);
}

Status GpuBackend::launch_packed(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                                 std::span<const uint8_t> buffer, const ParamLayout& layout, LaunchMode mode) {
    if (!launch_dims_ok(grid, block)) return VGPU_ERROR_INVALID_VALUE;
    return run_launch_packed(f, grid, block, shared_bytes, s, buffer, layout, mode);
}

Status GpuBackend::run_launch_packed(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes,
                                     BackendStream s, std::span<const uint8_t> buffer, const ParamLayout& layout,
                                     LaunchMode mode) {
    std::vector<void*> params(layout.count());
    std::vector<uint16_t> sizes(layout.count());
    for (uint32_t i = 0; i < layout.count(); ++i) {
        // The layout is the module's and not malformed (checked when the
        // function was looked up): every parameter lies inside the buffer.
        params[i] = const_cast<uint8_t*>(buffer.data()) + layout.offsets[i];
        sizes[i] = static_cast<uint16_t>(layout.sizes[i]);
    }
    return run_launch(f, grid, block, shared_bytes, s, params, sizes, mode);
}

bool cluster_tiles(Dim3 grid, Dim3 cluster) {
    return cluster.x && cluster.y && cluster.z && grid.x % cluster.x == 0 && grid.y % cluster.y == 0 &&
           grid.z % cluster.z == 0;
}

bool cluster_size_ok(Dim3 cluster, uint64_t max_blocks) {
    return cluster.x && cluster.y && cluster.z && uint64_t{cluster.x} * cluster.y * cluster.z <= max_blocks;
}

bool launch_dims_ok(Dim3 grid, Dim3 block) {
    return vgpu_launch_dims_ok(grid.x, grid.y, grid.z, block.x, block.y, block.z);
}

const char* to_string(SgStrategy s) {
    switch (s) {
    case SgStrategy::PerChunk: return "per-chunk";
    case SgStrategy::Coalesce: return "coalesce";
    case SgStrategy::Bounce: return "bounce";
    case SgStrategy::Batch: return "batch";
    case SgStrategy::GatherKernel: return "gather-kernel";
    case SgStrategy::DeviceWalk: return "device-walk";
    }
    return "?";
}

const char* status_name(uint32_t s) {
    switch (s) {
    case VGPU_SUCCESS: return "VGPU_SUCCESS";
    case VGPU_ERROR_INVALID_VALUE: return "VGPU_ERROR_INVALID_VALUE";
    case VGPU_ERROR_OUT_OF_MEMORY: return "VGPU_ERROR_OUT_OF_MEMORY";
    case VGPU_ERROR_NOT_INITIALIZED: return "VGPU_ERROR_NOT_INITIALIZED";
    case VGPU_ERROR_NO_DEVICE: return "VGPU_ERROR_NO_DEVICE";
    case VGPU_ERROR_INVALID_DEVICE: return "VGPU_ERROR_INVALID_DEVICE";
    case VGPU_ERROR_INVALID_IMAGE: return "VGPU_ERROR_INVALID_IMAGE";
    case VGPU_ERROR_INVALID_CONTEXT: return "VGPU_ERROR_INVALID_CONTEXT";
    case VGPU_ERROR_INVALID_HANDLE: return "VGPU_ERROR_INVALID_HANDLE";
    case VGPU_ERROR_PEER_ACCESS_UNSUPPORTED: return "VGPU_ERROR_PEER_ACCESS_UNSUPPORTED";
    case VGPU_ERROR_PEER_ACCESS_ALREADY_ENABLED: return "VGPU_ERROR_PEER_ACCESS_ALREADY_ENABLED";
    case VGPU_ERROR_PEER_ACCESS_NOT_ENABLED: return "VGPU_ERROR_PEER_ACCESS_NOT_ENABLED";
    case VGPU_ERROR_HOST_MEMORY_ALREADY_REGISTERED: return "VGPU_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
    case VGPU_ERROR_HOST_MEMORY_NOT_REGISTERED: return "VGPU_ERROR_HOST_MEMORY_NOT_REGISTERED";
    case VGPU_ERROR_ILLEGAL_STATE: return "VGPU_ERROR_ILLEGAL_STATE";
    case VGPU_ERROR_NOT_FOUND: return "VGPU_ERROR_NOT_FOUND";
    case VGPU_ERROR_NOT_READY: return "VGPU_ERROR_NOT_READY";
    case VGPU_ERROR_ILLEGAL_ADDRESS: return "VGPU_ERROR_ILLEGAL_ADDRESS";
    case VGPU_ERROR_LAUNCH_OUT_OF_RESOURCES: return "VGPU_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case VGPU_ERROR_LAUNCH_FAILED: return "VGPU_ERROR_LAUNCH_FAILED";
    case VGPU_ERROR_NOT_SUPPORTED: return "VGPU_ERROR_NOT_SUPPORTED";
    case VGPU_ERROR_UNSUPPORTED_LIMIT: return "VGPU_ERROR_UNSUPPORTED_LIMIT";
    case VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED: return "VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case VGPU_ERROR_STREAM_CAPTURE_INVALIDATED: return "VGPU_ERROR_STREAM_CAPTURE_INVALIDATED";
    case VGPU_ERROR_STREAM_CAPTURE_UNMATCHED: return "VGPU_ERROR_STREAM_CAPTURE_UNMATCHED";
    case VGPU_ERROR_GRAPH_EXEC_UPDATE_FAILURE: return "VGPU_ERROR_GRAPH_EXEC_UPDATE_FAILURE";
    case VGPU_ERROR_TIMEOUT: return "VGPU_ERROR_TIMEOUT";
    case VGPU_ERROR_UNKNOWN: return "VGPU_ERROR_UNKNOWN";
    }
    return "VGPU_STATUS_OTHER"; // a CUresult the ABI does not name; the number travels beside it
}

} // namespace kvmgpu::vgpu
