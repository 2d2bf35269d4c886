// The host backend's occupancy and context limits: answers a GPU would
// give, from the nominal figures in host_backend.h.
#include <algorithm>

#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"

namespace kvmgpu::vgpu {

// Blocks per multiprocessor: the fewest that threads, the block slots and
// shared memory allow. A block larger than the kernel's limit, or asking
// for more dynamic shared memory than it may, fits 0 times (the driver
// answers 0 too). The reference kernels use no registers.
Status HostBackend::occupancy(BackendFunction f, uint32_t block, uint64_t dynamic_shared, uint32_t, int* out) {
    if (f == 0 || f > cpu_kernels().size()) return VGPU_ERROR_INVALID_HANDLE;
    if (block == 0) return VGPU_ERROR_INVALID_VALUE;
    if (block > 1024 || dynamic_shared > static_cast<uint64_t>(max_dynamic_shared(f))) {
        *out = 0;
        return VGPU_SUCCESS;
    }
    const uint32_t warps = (block + 31) / 32;
    int n = std::min(kBlocksPerMultiprocessor, kThreadsPerMultiprocessor / static_cast<int>(warps * 32));
    if (dynamic_shared > 0) n = std::min<int>(n, static_cast<int>(kSharedPerMultiprocessor / dynamic_shared));
    *out = n;
    return VGPU_SUCCESS;
}

Status HostBackend::max_active_clusters(BackendFunction f, const ClusterShape& shape, int* out) {
    const Dim3 c = shape.has_cluster ? shape.cluster : Dim3{};
    if (!cluster_fits(shape.grid, c)) return VGPU_ERROR_INVALID_CLUSTER_SIZE;
    const uint64_t blocks = uint64_t{c.x} * c.y * c.z;
    int per_sm = 0, sms = 0;
    if (Status s = occupancy(f, shape.block.x * shape.block.y * shape.block.z, shape.shared_bytes, 0, &per_sm)) return s;
    if (Status s = device_attribute(16, &sms)) return s; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    *out = static_cast<int>(static_cast<uint64_t>(per_sm) * sms / blocks);
    return VGPU_SUCCESS;
}

Status HostBackend::max_cluster_size(BackendFunction f, const ClusterShape& shape, int* out) {
    int per_sm = 0;
    if (Status s = occupancy(f, shape.block.x * shape.block.y * shape.block.z, shape.shared_bytes, 0, &per_sm)) return s;
    *out = per_sm > 0 ? kMaxClusterBlocks : 0;
    return VGPU_SUCCESS;
}

// A GPU's start values: 1 KiB of stack per thread, 1 MiB printf FIFO,
// 8 MiB malloc heap, sync depth 2, 2048 pending launches, 64-byte L2
// fetches, no persisting L2; not a CUDA-in-graphics context (no shared
// memory limit of its own, CIG off, its fallback off), as the driver says
// of an ordinary context.
std::array<uint64_t, VGPU_LIMIT_COUNT_> HostBackend::start_limits() {
    return {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0, 0, 0, 0};
}

Status HostBackend::get_limit(int limit, uint64_t* out) {
    if (limit < 0 || limit >= static_cast<int>(VGPU_LIMIT_COUNT_)) return VGPU_ERROR_UNSUPPORTED_LIMIT;
    *out = limits_[limit];
    return VGPU_SUCCESS;
}

// As the driver: the L2 fetch granularity is a hint from 0 to 128 bytes;
// sizes are kept as given.
Status HostBackend::set_limit(int limit, uint64_t value) {
    if (limit < 0 || limit >= static_cast<int>(VGPU_LIMIT_COUNT_)) return VGPU_ERROR_UNSUPPORTED_LIMIT;
    if (limit == VGPU_LIMIT_MAX_L2_FETCH_GRANULARITY && value > 128) return VGPU_ERROR_INVALID_VALUE;
    limits_[limit] = value;
    return VGPU_SUCCESS;
}

} // namespace kvmgpu::vgpu
