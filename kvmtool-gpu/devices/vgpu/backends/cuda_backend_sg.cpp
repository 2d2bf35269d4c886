// CudaBackend's scatter-gather strategies. The device side is always one
// contiguous range from dptr; the host side is the runs, in order.
#include <algorithm>
#include <climits>

#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"
#include "kvmtool-gpu/devices/vgpu/backends/run_cursor.h"

namespace kvmgpu::vgpu {

Status CudaBackend::memcpy_htod_sg(uint64_t dst, std::span<const memmap::HostRun> given, SgStrategy how,
                                   BackendStream s, bool async) {
    std::span<const memmap::HostRun> runs = given;
    if (how != SgStrategy::Bounce) // the copy engine or a kernel reaches guest RAM
        if (const Status st = prepare_runs(given, &runs); st != VGPU_SUCCESS) return st;
    switch (how) {
    case SgStrategy::PerChunk:
    case SgStrategy::Coalesce: return sg_each(dst, runs, stream(s), true, async);
    case SgStrategy::Bounce: return sg_bounce_htod(dst, runs, stream(s), async);
    case SgStrategy::Batch: return sg_batch(dst, runs, stream(s), true, async);
    case SgStrategy::GatherKernel: return sg_gather(dst, runs, stream(s), true, async);
    case SgStrategy::DeviceWalk: break; // takes a list, not runs: memcpy_sg_walk()
    }
    return VGPU_ERROR_INVALID_VALUE;
}

Status CudaBackend::memcpy_dtoh_sg(uint64_t src, std::span<const memmap::HostRun> given, SgStrategy how,
                                   BackendStream s, bool async) {
    std::span<const memmap::HostRun> runs = given;
    if (how != SgStrategy::Bounce) // the copy engine or a kernel reaches guest RAM
        if (const Status st = prepare_runs(given, &runs); st != VGPU_SUCCESS) return st;
    switch (how) {
    case SgStrategy::PerChunk:
    case SgStrategy::Coalesce: return sg_each(src, runs, stream(s), false, async);
    case SgStrategy::Bounce: return sg_bounce_dtoh(src, runs, stream(s)); // must land before we unpack
    case SgStrategy::Batch: return sg_batch(src, runs, stream(s), false, async);
    case SgStrategy::GatherKernel: return sg_gather(src, runs, stream(s), false, async);
    case SgStrategy::DeviceWalk: break;
    }
    return VGPU_ERROR_INVALID_VALUE;
}

Status CudaBackend::prepare_runs(std::span<const memmap::HostRun> runs, std::span<const memmap::HostRun>* out) {
    bool cut = false;
    for (const auto& r : runs) {
        if (const Status s = prepare_guest_ram(r.host, r.len); s != VGPU_SUCCESS) return s;
            lazy_.for_each_piece(r.host, r.len, [&](uint64_t off, uint64_t) { cut |= off != 0; });
    }
    *out = runs;
    if (!cut) return VGPU_SUCCESS;
    split_runs_.clear();
    for (const auto& r : runs)
        lazy_.for_each_piece(r.host, r.len, [&](uint64_t off, uint64_t len) {
            split_runs_.push_back(memmap::HostRun{r.host + off, memmap::GuestPhysAddr{r.gpa.value + off}, len});
        });
    *out = split_runs_;
    return VGPU_SUCCESS;
}

// One async copy per run, straight from/to (registered) guest RAM.
Status CudaBackend::sg_each(CUdeviceptr dptr, std::span<const memmap::HostRun> runs, CUstream s, bool htod,
                            bool async) {
    uint64_t off = 0;
    for (const auto& r : runs) {
        CU_TRY(htod ? api_.cuMemcpyHtoDAsync(dptr + off, r.host, r.len, s)
                    : api_.cuMemcpyDtoHAsync(r.host, dptr + off, r.len, s));
        off += r.len;
    }
    return finish(CUDA_SUCCESS, s, async);
}

// Pack runs into one pinned buffer while the other one's copy is in flight.
Status CudaBackend::sg_bounce_htod(CUdeviceptr dst, std::span<const memmap::HostRun> runs, CUstream s, bool async) {
    if (!bounce_[0] || !bounce_[1]) return VGPU_ERROR_NOT_SUPPORTED;
    RunCursor cursor(runs);
    uint64_t off = 0;
    for (int i = 0; !cursor.done(); i ^= 1) {
        CU_TRY(api_.cuEventSynchronize(bounce_done_[i])); // its previous copy has left the buffer
        const uint64_t n = cursor.gather(static_cast<uint8_t*>(bounce_[i]), opts_.bounce_bytes);
        CU_TRY(api_.cuMemcpyHtoDAsync(dst + off, bounce_[i], n, s));
        CU_TRY(api_.cuEventRecord(bounce_done_[i], s));
        off += n;
    }
    return finish(CUDA_SUCCESS, s, async);
}

// Copy chunk k+1 into one buffer while the CPU unpacks chunk k from the other.
Status CudaBackend::sg_bounce_dtoh(CUdeviceptr src, std::span<const memmap::HostRun> runs, CUstream s) {
    if (!bounce_[0] || !bounce_[1]) return VGPU_ERROR_NOT_SUPPORTED;
    const uint64_t total = total_bytes(runs);
    RunCursor cursor(runs);
    uint64_t issued = 0, size[2] = {0, 0};
    auto issue = [&](int i) {
        size[i] = std::min(opts_.bounce_bytes, total - issued);
        CUresult r = api_.cuMemcpyDtoHAsync(bounce_[i], src + issued, size[i], s);
        if (r == CUDA_SUCCESS) r = api_.cuEventRecord(bounce_done_[i], s);
        issued += size[i];
        return r;
    };
    CU_TRY(issue(0));
    for (int i = 0;; i ^= 1) {
        const bool more = issued < total;
        if (more) CU_TRY(issue(i ^ 1));
        CU_TRY(api_.cuEventSynchronize(bounce_done_[i]));
        cursor.scatter(static_cast<const uint8_t*>(bounce_[i]), size[i]);
        if (!more) break;
    }
    return VGPU_SUCCESS;
}

Status CudaBackend::sg_batch(CUdeviceptr dptr, std::span<const memmap::HostRun> runs, CUstream s, bool htod,
                             bool async) {
    if (!api_.cuMemcpyBatchAsync) return VGPU_ERROR_NOT_SUPPORTED;
    batch_dst_.clear(), batch_src_.clear(), batch_size_.clear();
    uint64_t off = 0;
    for (const auto& r : runs) {
        const auto host = reinterpret_cast<CUdeviceptr>(r.host);
        batch_dst_.push_back(htod ? dptr + off : host);
        batch_src_.push_back(htod ? host : dptr + off);
        batch_size_.push_back(r.len);
        off += r.len;
    }
    CUmemcpyAttributes attr{};
    attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    attr.srcLocHint.type = htod ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
    attr.dstLocHint.type = htod ? CU_MEM_LOCATION_TYPE_DEVICE : CU_MEM_LOCATION_TYPE_HOST;
    attr.srcLocHint.id = attr.dstLocHint.id = opts_.ordinal;
    size_t first = 0;
    // The batch API refuses the legacy NULL stream; the internal stream is a
    // blocking one, so it stays ordered with stream-0 work all the same.
    CUstream bs = s ? s : internal_;
    return finish(api_.cuMemcpyBatchAsync(batch_dst_.data(), batch_src_.data(), batch_size_.data(), batch_size_.size(),
                                          &attr, &first, 1, bs),
                  bs, async);
}

Status CudaBackend::reserve_run_table(uint64_t entries) {
    if (entries <= table_cap_) return VGPU_SUCCESS;
    CU_TRY(api_.cuEventSynchronize(table_free_)); // nothing may still read the old table
    if (table_host_) api_.cuMemFreeHost(table_host_);
    if (table_dev_) api_.cuMemFree(table_dev_);
    const uint64_t cap = std::max<uint64_t>({entries, 4096, table_cap_ * 2});
    table_host_ = nullptr, table_dev_ = 0, table_cap_ = 0;
    void* host = nullptr;
    CU_TRY(api_.cuMemHostAlloc(&host, cap * sizeof(kvmgpu_copy_run), 0));
    table_host_ = static_cast<kvmgpu_copy_run*>(host);
    CU_TRY(api_.cuMemAlloc(&table_dev_, cap * sizeof(kvmgpu_copy_run)));
    table_cap_ = cap;
    return VGPU_SUCCESS;
}

// Runs become pieces of at most gather_piece bytes (so one large run still
// spreads over many blocks). The run table is built in chunks, each sent
// and launched as soon as it is full, so the GPU copies while the CPU
// builds the rest (on the H100, building all 65,536 entries first cost
// ~0.9 ms of a 5.3 ms transfer).
Status CudaBackend::sg_gather(CUdeviceptr dptr, std::span<const memmap::HostRun> runs, CUstream s, bool htod,
                              bool async) {
    if (!gather_fn_ || !scatter_fn_) return VGPU_ERROR_NOT_SUPPORTED;
    constexpr uint64_t kChunk = 8192; // entries per launch
    const uint64_t piece = opts_.gather_piece;
    const uint64_t total = total_bytes(runs);
    if (total == 0) return VGPU_SUCCESS;
    // Each run gives ceil(len / piece) <= 1 + len / piece entries.
    const uint64_t max_entries = runs.size() + total / piece;
    if (max_entries > UINT_MAX) return VGPU_ERROR_INVALID_VALUE;
    if (Status st = reserve_run_table(max_entries); st != VGPU_SUCCESS) return st;
    CU_TRY(api_.cuEventSynchronize(table_free_)); // the previous transfer's table is consumed

    uint64_t n = 0, sent = 0, off = 0;
    auto flush = [&]() -> CUresult {
        CUdeviceptr table = table_dev_ + sent * sizeof(kvmgpu_copy_run);
        unsigned count = static_cast<unsigned>(n - sent);
        CUresult r = api_.cuMemcpyHtoDAsync(table, table_host_ + sent, count * sizeof(kvmgpu_copy_run), s);
        void* args[] = {&table, &count};
        if (r == CUDA_SUCCESS)
            r = api_.cuLaunchKernel(htod ? gather_fn_ : scatter_fn_, count, 1, 1, KVMGPU_SG_THREADS, 1, 1, 0, s, args,
                                    nullptr);
        sent = n;
        return r;
    };
    Status st = VGPU_SUCCESS;
    for (const auto& r : runs) {
        const uint64_t zc = guest_ram_device_address(r.host);
        if (zc == 0) {
            st = VGPU_ERROR_NOT_SUPPORTED; // not device-mapped guest RAM
            break;
        }
        for (uint64_t o = 0; o < r.len; o += piece) {
            const uint64_t len = std::min(piece, r.len - o);
            const uint64_t dev = dptr + off + o;
            table_host_[n++] = htod ? kvmgpu_copy_run{zc + o, dev, len} : kvmgpu_copy_run{dev, zc + o, len};
            if (n - sent == kChunk && (st = to_status(flush())) != VGPU_SUCCESS) break;
        }
        if (st != VGPU_SUCCESS) break;
        off += r.len;
    }
    if (st == VGPU_SUCCESS && n > sent) st = to_status(flush());
    // Even after an error: chunks already queued read the table until this.
    const CUresult rec = api_.cuEventRecord(table_free_, s);
    if (st != VGPU_SUCCESS) return st;
    return finish(rec, s, async);
}

} // namespace kvmgpu::vgpu
