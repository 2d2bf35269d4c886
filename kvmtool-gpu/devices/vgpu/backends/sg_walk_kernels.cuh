// The device walk's kernels (see sg_walk.h for the three steps and why).
// Included by sg_kernels.cu, after copy_run(), so one fatbin holds every
// kernel the CUDA backend loads.
#include "sg_walk.h"

namespace {

constexpr unsigned kFullMask = 0xffffffffu;

// Inclusive sum over the block of each thread's x (blockDim.x a multiple
// of 32, at most 1024). Every thread of the block must call it.
__device__ __forceinline__ uint64_t block_inclusive_sum(uint64_t x) {
    __shared__ uint64_t warp_sums[32];
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (unsigned o = 1; o < 32; o <<= 1) {
        const uint64_t y = __shfl_up_sync(kFullMask, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        uint64_t w = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0;
        for (unsigned o = 1; o < 32; o <<= 1) {
            const uint64_t y = __shfl_up_sync(kFullMask, w, o);
            if (lane >= o) w += y;
        }
        warp_sums[lane] = w;
    }
    __syncthreads();
    return warp > 0 ? x + warp_sums[warp - 1] : x;
}

__device__ __forceinline__ uint64_t* u64s(uint64_t a) { return reinterpret_cast<uint64_t*>(a); }
__device__ __forceinline__ uint32_t* u32s(uint64_t a) { return reinterpret_cast<uint32_t*>(a); }

} // namespace

// Step 1: one thread per entry. The entry is read once, as one 16-byte load.
extern "C" __global__ void __launch_bounds__(KVMGPU_WALK_SCAN_THREADS) kvmgpu_sg_walk_scan(kvmgpu_walk_params p) {
    const uint64_t i = static_cast<uint64_t>(blockIdx.x) * KVMGPU_WALK_SCAN_THREADS + threadIdx.x;
    uint64_t len = 0, src = 0;
    int bad = 0;
    if (i < p.count) {
        const ulonglong2 e = reinterpret_cast<const ulonglong2*>(p.list)[i];
        src = kvmgpu_walk_entry_address(p.ram, p.nwindows, e.x, e.y, p.total);
        if (src != 0)
            len = e.y;
        else
            bad = 1;
    }
    const uint64_t end = block_inclusive_sum(len);
    const int block_bad = __syncthreads_or(bad);
    if (i < p.count) u64s(p.src)[i] = src, u64s(p.end)[i] = end;
    if (threadIdx.x == blockDim.x - 1) u64s(p.block_total)[blockIdx.x] = end, u32s(p.block_bad)[blockIdx.x] = block_bad;
}

// Step 2: one block; nblocks <= KVMGPU_WALK_SCAN_THREADS (VGPU_MAX_SG_ENTRIES / 1024).
extern "C" __global__ void __launch_bounds__(KVMGPU_WALK_SCAN_THREADS)
    kvmgpu_sg_walk_offsets(kvmgpu_walk_params p, unsigned nblocks) {
    const unsigned t = threadIdx.x;
    const uint64_t mine = t < nblocks ? u64s(p.block_total)[t] : 0;
    const int bad = t < nblocks ? u32s(p.block_bad)[t] != 0 : 0;
    const uint64_t through = block_inclusive_sum(mine);
    const int any_bad = __syncthreads_or(bad);
    if (t < nblocks) u64s(p.block_total)[t] = through - mine; // each thread rewrites only what it read
    if (t == blockDim.x - 1) {
        const uint32_t ok = !any_bad && through == p.total;
        *u32s(p.verdict) = ok;
        if (!ok) atomicAdd_system(u32s(p.rejections), 1u);
    }
}

// Step 3: one thread per unit: the last scan block starting at or before
// the unit's first byte, and in it the first entry ending after it.
extern "C" __global__ void __launch_bounds__(KVMGPU_WALK_UNIT_THREADS)
    kvmgpu_sg_walk_units(kvmgpu_walk_params p, unsigned nblocks) {
    const uint64_t u = static_cast<uint64_t>(blockIdx.x) * KVMGPU_WALK_UNIT_THREADS + threadIdx.x;
    if (u >= p.units || *reinterpret_cast<volatile uint32_t*>(p.verdict) != 1) return;
    const uint64_t* base = u64s(p.block_total); // now each scan block's first byte
    const uint64_t* end = u64s(p.end);
    const uint64_t start = u * KVMGPU_WALK_UNIT;
    unsigned lo = 0, hi = nblocks - 1;
    while (lo < hi) {
        const unsigned mid = (lo + hi + 1) / 2;
        if (base[mid] <= start) lo = mid; else hi = mid - 1;
    }
    const uint64_t b = lo;
    uint64_t first = b * KVMGPU_WALK_SCAN_THREADS;
    uint64_t last = min(p.count, first + KVMGPU_WALK_SCAN_THREADS) - 1;
    while (first < last) {
        const uint64_t mid = (first + last) / 2;
        if (base[b] + end[mid] > start) last = mid; else first = mid + 1;
    }
    u32s(p.unit_first)[u] = static_cast<uint32_t>(first);
}

// Step 4: block u copies device-side bytes [u * UNIT, (u + 1) * UNIT).
extern "C" __global__ void __launch_bounds__(KVMGPU_WALK_COPY_THREADS)
    kvmgpu_sg_walk_copy(kvmgpu_walk_params p, unsigned) {
    if (*reinterpret_cast<volatile uint32_t*>(p.verdict) != 1) return;
    const uint64_t* base = u64s(p.block_total);
    const uint64_t* end = u64s(p.end);
    const uint64_t* src = u64s(p.src);
    const uint64_t start = static_cast<uint64_t>(blockIdx.x) * KVMGPU_WALK_UNIT;
    const uint64_t stop = min(start + KVMGPU_WALK_UNIT, p.total);
    // Every entry is non-empty and they sum to total (the verdict), so the
    // entries from the unit's first cover [start, stop) without running out.
    for (uint64_t j = u32s(p.unit_first)[blockIdx.x], pos = start; pos < stop; ++j) {
        const uint64_t jb = j / KVMGPU_WALK_SCAN_THREADS;
        const uint64_t e_end = base[jb] + end[j];
        const uint64_t e_begin = j % KVMGPU_WALK_SCAN_THREADS == 0 ? base[jb] : base[jb] + end[j - 1];
        const uint64_t n = min(stop, e_end) - pos;
        const uint64_t ram = src[j] + (pos - e_begin), dev = p.dptr + pos;
        copy_run(p.htod ? kvmgpu_copy_run{ram, dev, n} : kvmgpu_copy_run{dev, ram, n});
        pos += n;
    }
}
