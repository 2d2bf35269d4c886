// The GatherKernel strategy's kernels, built by nvcc into a fatbin (sm_90
// SASS + compute_90 PTX) that is embedded in the VMM and loaded into each
// CUDA backend's context. They copy a table of runs: gather reads guest RAM
// through its zero-copy device mapping into a contiguous device buffer,
// scatter writes the other way. Blocks stride over the runs; the threads of
// a block share one run. 16-byte loads and stores where source and
// destination share 16-byte alignment, narrower ones where they share less,
// bytes for the unaligned head and the tail.
#include <stdint.h>

#include "sg_copy_run.h"

namespace {

template <typename V>
__device__ __forceinline__ void copy_as(const uint8_t* s, uint8_t* d, uint64_t len) {
    constexpr uint64_t W = sizeof(V);
    uint64_t head = (W - (reinterpret_cast<uintptr_t>(s) & (W - 1))) & (W - 1);
    if (head > len) head = len;
    for (uint64_t i = threadIdx.x; i < head; i += blockDim.x) d[i] = s[i];
    const uint64_t nvec = (len - head) / W;
    const V* __restrict__ vs = reinterpret_cast<const V*>(s + head);
    V* __restrict__ vd = reinterpret_cast<V*>(d + head);
    // Four loads in flight per thread before the stores: zero-copy reads
    // cross PCIe, so latency, not issue rate, bounds a block.
    const uint64_t stride = blockDim.x;
    uint64_t i = threadIdx.x;
    for (; i + 3 * stride < nvec; i += 4 * stride) {
        const V a = vs[i], b = vs[i + stride], c = vs[i + 2 * stride], e = vs[i + 3 * stride];
        vd[i] = a, vd[i + stride] = b, vd[i + 2 * stride] = c, vd[i + 3 * stride] = e;
    }
    for (; i < nvec; i += stride) vd[i] = vs[i];
    for (uint64_t i = head + nvec * W + threadIdx.x; i < len; i += blockDim.x) d[i] = s[i];
}

__device__ __forceinline__ void copy_run(const kvmgpu_copy_run& r) {
    const uint8_t* s = reinterpret_cast<const uint8_t*>(r.src);
    uint8_t* d = reinterpret_cast<uint8_t*>(r.dst);
    const uint64_t mis = r.src ^ r.dst; // alignment the two sides share
    if ((mis & 15) == 0)
        copy_as<uint4>(s, d, r.len);
    else if ((mis & 7) == 0)
        copy_as<uint2>(s, d, r.len);
    else if ((mis & 3) == 0)
        copy_as<uint32_t>(s, d, r.len);
    else
        copy_as<uint8_t>(s, d, r.len);
}

__device__ __forceinline__ void copy_runs(const kvmgpu_copy_run* runs, unsigned n) {
    for (unsigned r = blockIdx.x; r < n; r += gridDim.x) copy_run(runs[r]);
}

} // namespace

extern "C" __global__ void __launch_bounds__(KVMGPU_SG_THREADS) kvmgpu_sg_gather(const kvmgpu_copy_run* runs, unsigned n) {
    copy_runs(runs, n);
}

extern "C" __global__ void __launch_bounds__(KVMGPU_SG_THREADS) kvmgpu_sg_scatter(const kvmgpu_copy_run* runs, unsigned n) {
    copy_runs(runs, n);
}

#include "sg_walk_kernels.cuh"
