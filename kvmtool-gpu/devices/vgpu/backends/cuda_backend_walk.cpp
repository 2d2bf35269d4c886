// CudaBackend's device walk (VGPU_SG_DEVICE_WALK, kernels in
// sg_walk_kernels.cuh): four launches and no per-entry host work, so the
// VMM's cost of a transfer does not grow with its list.
#include <algorithm>

#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"
#include "kvmtool-gpu/devices/vgpu/backends/sg_walk.h"

namespace kvmgpu::vgpu {
namespace {

uint64_t scan_blocks(uint64_t entries) {
    return (entries + KVMGPU_WALK_SCAN_THREADS - 1) / KVMGPU_WALK_SCAN_THREADS;
}

// Where each part of the scratch lies for `cap` entries and `units` units.
struct WalkScratch {
    uint64_t src, end, block_total, block_bad, unit_first, verdict, bytes;
    WalkScratch(uint64_t base, uint64_t cap, uint64_t units) {
        const uint64_t blocks = scan_blocks(cap);
        src = base;
        end = src + cap * 8;
        block_total = end + cap * 8;
        block_bad = block_total + blocks * 8;
        unit_first = block_bad + blocks * 4;
        verdict = unit_first + units * 4;
        bytes = verdict + 4 - base;
    }
};

} // namespace

CUresult CudaBackend::load_walk() {
    CUresult r = api_.cuModuleGetFunction(&walk_scan_fn_, builtin_, "kvmgpu_sg_walk_scan");
    if (r == CUDA_SUCCESS) r = api_.cuModuleGetFunction(&walk_offsets_fn_, builtin_, "kvmgpu_sg_walk_offsets");
    if (r == CUDA_SUCCESS) r = api_.cuModuleGetFunction(&walk_units_fn_, builtin_, "kvmgpu_sg_walk_units");
    if (r == CUDA_SUCCESS) r = api_.cuModuleGetFunction(&walk_copy_fn_, builtin_, "kvmgpu_sg_walk_copy");
    // Non-blocking: scans must not wait behind copies on the legacy stream.
    // Highest priority: a scan's blocks take the first SM slots a running
    // copy frees, instead of queueing behind that copy's remaining blocks
    // (which would put the scan back between the two copies).
    int least = 0, greatest = 0;
    if (r == CUDA_SUCCESS) r = api_.cuCtxGetStreamPriorityRange(&least, &greatest);
    if (r == CUDA_SUCCESS) r = api_.cuStreamCreateWithPriority(&walk_stream_, CU_STREAM_NON_BLOCKING, greatest);
    for (int i = 0; i < 2 && r == CUDA_SUCCESS; ++i) {
        r = api_.cuEventCreate(&walk_scanned_[i], CU_EVENT_DISABLE_TIMING);
        if (r == CUDA_SUCCESS) r = api_.cuEventCreate(&walk_free_[i], CU_EVENT_DISABLE_TIMING);
    }
    void* host = nullptr;
    if (r == CUDA_SUCCESS) r = api_.cuMemHostAlloc(&host, sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP);
    if (r == CUDA_SUCCESS) {
        *static_cast<uint32_t*>(host) = 0;
        r = api_.cuMemHostGetDevicePointer(&rejections_dev_, host, 0);
    }
    if (r != CUDA_SUCCESS) {
        walk_scan_fn_ = walk_offsets_fn_ = walk_units_fn_ = walk_copy_fn_ = nullptr; // teardown frees the rest
        return r;
    }
    rejections_host_ = static_cast<volatile uint32_t*>(host);
    rejections_seen_ = 0;
    return CUDA_SUCCESS;
}

Status CudaBackend::reserve_walk_scratch(uint64_t entries, uint64_t units) {
    if (entries <= walk_cap_ && units <= walk_units_cap_) return VGPU_SUCCESS;
    // No walk may still use the old slots: neither a scan nor a copy.
    CU_TRY(api_.cuStreamSynchronize(walk_stream_));
    for (CUevent e : walk_free_) CU_TRY(api_.cuEventSynchronize(e));
    for (CUdeviceptr& d : walk_scratch_) {
        if (d) api_.cuMemFree(d);
        d = 0;
    }
    const uint64_t cap = std::max<uint64_t>({entries, walk_cap_, 4096});
    const uint64_t ucap = std::max<uint64_t>({units, walk_units_cap_, 4096});
    walk_cap_ = walk_units_cap_ = 0;
    for (CUdeviceptr& d : walk_scratch_) CU_TRY(api_.cuMemAlloc(&d, WalkScratch(0, cap, ucap).bytes));
    walk_cap_ = cap, walk_units_cap_ = ucap;
    return VGPU_SUCCESS;
}

Status CudaBackend::with_walk_refusals(Status s) {
    if (s != VGPU_SUCCESS || !rejections_host_) return s;
    const uint32_t now = *rejections_host_;
    if (now == rejections_seen_) return s;
    rejections_seen_ = now;
    return VGPU_ERROR_INVALID_VALUE;
}

Status CudaBackend::memcpy_sg_walk(bool htod, uint64_t dptr, const SgWalk& w, BackendStream bs, bool async) {
    if (!has_device_walk()) return VGPU_ERROR_NOT_SUPPORTED;
    if (w.count == 0 || w.count > VGPU_MAX_SG_ENTRIES || w.total == 0 || w.ram.size() > KVMGPU_WALK_MAX_WINDOWS)
        return VGPU_ERROR_INVALID_VALUE;
    // The GPU reads the list and whichever frames it names: all of guest RAM.
    if (const Status s = prepare_guest_ram(nullptr, 0); s != VGPU_SUCCESS) return s;
    kvmgpu_walk_params p{};
    p.list = ram_.device_address(w.list);
    if (p.list == 0) return VGPU_ERROR_NOT_SUPPORTED; // not device-mapped guest RAM
    for (const RamRegion& r : w.ram) {
        const uint64_t dev = ram_.device_address(r.host);
        // The whole region must be one registered range for dev + offset to hold.
        if (dev == 0 || ram_.host_of(dev, r.bytes) != r.host) return VGPU_ERROR_NOT_SUPPORTED;
        p.ram[p.nwindows++] = kvmgpu_ram_window{r.gpa, r.bytes, dev};
    }
    const uint64_t units = (w.total + KVMGPU_WALK_UNIT - 1) / KVMGPU_WALK_UNIT;
    if (units > 0x7fffffffu) return VGPU_ERROR_INVALID_VALUE; // 8 TiB: far beyond any allocation
    if (Status st = reserve_walk_scratch(w.count, units); st != VGPU_SUCCESS) return st;
    const unsigned slot = walk_next_;
    walk_next_ ^= 1;
    const WalkScratch at(walk_scratch_[slot], walk_cap_, walk_units_cap_);
    p.count = w.count, p.total = w.total, p.dptr = dptr, p.htod = htod;
    p.src = at.src, p.end = at.end, p.block_total = at.block_total, p.block_bad = at.block_bad;
    p.unit_first = at.unit_first, p.units = units;
    p.verdict = at.verdict, p.rejections = rejections_dev_;

    const CUstream s = stream(bs);
    auto nblocks = static_cast<unsigned>(scan_blocks(w.count));
    const auto unit_blocks = static_cast<unsigned>((units + KVMGPU_WALK_UNIT_THREADS - 1) / KVMGPU_WALK_UNIT_THREADS);
    void* scan_args[] = {&p};
    void* args[] = {&p, &nblocks};
    // Scan on walk_stream_, once the copy that last used this slot is done;
    // so it overlaps the previous walk's copy. The list is read then, not
    // in stream order: the guest keeps it intact until the copy has run.
    CUresult r = api_.cuStreamWaitEvent(walk_stream_, walk_free_[slot], 0);
    if (r == CUDA_SUCCESS)
        r = api_.cuLaunchKernel(walk_scan_fn_, nblocks, 1, 1, KVMGPU_WALK_SCAN_THREADS, 1, 1, 0, walk_stream_,
                                scan_args, nullptr);
    if (r == CUDA_SUCCESS)
        r = api_.cuLaunchKernel(walk_offsets_fn_, 1, 1, 1, KVMGPU_WALK_SCAN_THREADS, 1, 1, 0, walk_stream_, args,
                                nullptr);
    if (r == CUDA_SUCCESS)
        r = api_.cuLaunchKernel(walk_units_fn_, unit_blocks, 1, 1, KVMGPU_WALK_UNIT_THREADS, 1, 1, 0, walk_stream_,
                                args, nullptr);
    const CUresult scanned = api_.cuEventRecord(walk_scanned_[slot], walk_stream_);
    if (r == CUDA_SUCCESS) r = scanned;
    if (r == CUDA_SUCCESS) r = api_.cuStreamWaitEvent(s, walk_scanned_[slot], 0);
    if (r == CUDA_SUCCESS)
        r = api_.cuLaunchKernel(walk_copy_fn_, static_cast<unsigned>(units), 1, 1, KVMGPU_WALK_COPY_THREADS, 1, 1, 0,
                                s, args, nullptr);
    const CUresult freed = api_.cuEventRecord(walk_free_[slot], s); // even after an error: what was queued reads it
    if (r != CUDA_SUCCESS) return to_status(r);
    if (freed != CUDA_SUCCESS || async) return to_status(freed);
    return with_walk_refusals(to_status(api_.cuStreamSynchronize(s)));
}

} // namespace kvmgpu::vgpu
