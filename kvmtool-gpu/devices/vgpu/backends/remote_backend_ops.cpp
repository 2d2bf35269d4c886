// RemoteBackend's GpuBackend methods: each packs its arguments into one
// request (scalars in arg[], byte arrays in the data area), and unpacks the
// reply. Host pointers outside shared guest RAM never cross as numbers.
#include <algorithm>
#include <cstring>

#include "kvmtool-gpu/devices/vgpu/backends/remote_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/sg_walk.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kKeepBytes = 4ull << 20; // data area kept resident after a larger transfer
uint64_t align16(uint64_t v) { return (v + 15) & ~uint64_t{15}; }
} // namespace

Status RemoteBackend::simple(RpcOp op, std::initializer_list<uint64_t> args, uint64_t* out0, uint64_t in_bytes) {
    const Reply r = call(op, args, in_bytes);
    if (out0 && r.r.status == VGPU_SUCCESS) *out0 = r.r.out[0];
    return static_cast<Status>(r.r.status);
}

Status RemoteBackend::created(const Reply& r, uint64_t* out) {
    if (r.r.status != VGPU_SUCCESS) return static_cast<Status>(r.r.status);
    *out = r.r.out[0];
    pristine_ = false;
    return VGPU_SUCCESS;
}

Status RemoteBackend::device_count(int* out) {
    uint64_t v = 0;
    const Status s = simple(RpcOp::DeviceCount, {}, &v);
    if (s == VGPU_SUCCESS) *out = static_cast<int>(v);
    return s;
}

Status RemoteBackend::device_attribute(int attribute, int ordinal, int* out) {
    uint64_t v = 0;
    const Status s = simple(RpcOp::DeviceAttribute, {static_cast<uint64_t>(attribute), static_cast<uint64_t>(ordinal)}, &v);
    if (s == VGPU_SUCCESS) *out = static_cast<int>(static_cast<int64_t>(v));
    return s;
}

Status RemoteBackend::device_name(int ordinal, char* buf, size_t len) {
    if (len == 0 || len > opts_.data_bytes) return VGPU_ERROR_INVALID_VALUE;
    const Reply r = call(RpcOp::DeviceName, {static_cast<uint64_t>(ordinal), len});
    if (r.r.status == VGPU_SUCCESS) std::memcpy(buf, ch_->data(), len);
    return static_cast<Status>(r.r.status);
}

Status RemoteBackend::device_total_mem(int ordinal, uint64_t* out) {
    return simple(RpcOp::DeviceTotalMem, {static_cast<uint64_t>(ordinal)}, out);
}

Status RemoteBackend::ctx_synchronize() { return simple(RpcOp::CtxSynchronize, {}); }

Status RemoteBackend::mem_alloc(uint64_t bytes, uint64_t* dptr) { return created(call(RpcOp::MemAlloc, {bytes}), dptr); }

Status RemoteBackend::mem_free(uint64_t dptr) { return simple(RpcOp::MemFree, {dptr}); }

Status RemoteBackend::mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes) {
    const Reply r = call(RpcOp::MemGetInfo, {});
    if (r.r.status == VGPU_SUCCESS) *free_bytes = r.r.out[0], *total_bytes = r.r.out[1];
    return static_cast<Status>(r.r.status);
}

// ---- copies -----------------------------------------------------------------

Status RemoteBackend::memcpy_htod(uint64_t dst, const void* src, uint64_t bytes, BackendStream s, bool async) {
    if (shared(src, bytes)) return simple(RpcOp::MemcpyHtoD, {dst, reinterpret_cast<uint64_t>(src), bytes, s, async});
    return staged_copy(true, const_cast<uint8_t*>(static_cast<const uint8_t*>(src)), dst, bytes, s);
}

Status RemoteBackend::memcpy_dtoh(void* dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) {
    if (shared(dst, bytes)) return simple(RpcOp::MemcpyDtoH, {reinterpret_cast<uint64_t>(dst), src, bytes, s, async});
    return staged_copy(false, static_cast<uint8_t*>(dst), src, bytes, s);
}

// Host memory the worker does not share goes through the data area, a piece
// at a time, each piece complete before the next is staged (so `async` is
// not honoured: the copy is synchronous).
Status RemoteBackend::staged_copy(bool htod, uint8_t* host, uint64_t dptr, uint64_t bytes, BackendStream s) {
    uint64_t off = 0;
    do {
        const uint64_t n = std::min(bytes - off, opts_.data_bytes);
        uint8_t* area = this->area();
        if (!area) return VGPU_ERROR_NO_DEVICE;
        if (htod && n) std::memcpy(area, host + off, n);
        const Reply r = htod ? call(RpcOp::MemcpyHtoD, {dptr + off, 0, n, s, 0}, n, kRpcStaged)
                             : call(RpcOp::MemcpyDtoH, {0, dptr + off, n, s, 0}, 0, kRpcStaged);
        if (r.r.status != VGPU_SUCCESS) return static_cast<Status>(r.r.status);
        if (!htod && n) std::memcpy(host + off, ch_->data(), n);
        off += n;
    } while (off < bytes);
    if (bytes > kKeepBytes) ch_->trim(kKeepBytes);
    return VGPU_SUCCESS;
}

Status RemoteBackend::memcpy_dtod(uint64_t dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) {
    return simple(RpcOp::MemcpyDtoD, {dst, src, bytes, s, async});
}

// The run list travels in the data area; a list longer than the area goes in
// several calls, each continuing on the device where the last one stopped.
Status RemoteBackend::sg(bool htod, uint64_t dptr, std::span<const memmap::HostRun> runs, SgStrategy how,
                         BackendStream s, bool async) {
    for (const memmap::HostRun& r : runs)
        if (!shared(r.host, r.len)) return VGPU_ERROR_INVALID_VALUE; // the worker would copy a stale snapshot
    const uint64_t per_call = opts_.data_bytes / sizeof(memmap::HostRun);
    if (per_call == 0) return VGPU_ERROR_INVALID_VALUE;
    uint64_t moved = 0;
    for (size_t i = 0; i < runs.size();) {
        const size_t n = std::min<uint64_t>(per_call, runs.size() - i);
        uint8_t* area = this->area();
        if (!area) return VGPU_ERROR_NO_DEVICE;
        std::memcpy(area, runs.data() + i, n * sizeof(memmap::HostRun));
        const Status st = simple(htod ? RpcOp::MemcpyHtoDSg : RpcOp::MemcpyDtoHSg,
                                 {dptr + moved, n, static_cast<uint64_t>(how), s, async}, nullptr,
                                 n * sizeof(memmap::HostRun));
        if (st != VGPU_SUCCESS) return st;
        for (size_t k = i; k < i + n; ++k) moved += runs[k].len;
        i += n;
    }
    if (runs.size_bytes() > kKeepBytes && ch_) ch_->trim(kKeepBytes);
    return VGPU_SUCCESS;
}

// O(1) in the list's length: the worker's backend reads the list itself.
Status RemoteBackend::memcpy_sg_walk(bool htod, uint64_t dptr, const SgWalk& w, BackendStream s, bool async) {
    if (w.ram.size() > KVMGPU_WALK_MAX_WINDOWS || w.count > VGPU_MAX_SG_ENTRIES) return VGPU_ERROR_INVALID_VALUE;
    if (!shared(w.list, w.count * sizeof(vgpu_sg_entry))) return VGPU_ERROR_INVALID_VALUE;
    for (const RamRegion& r : w.ram)
        if (!shared(r.host, r.bytes)) return VGPU_ERROR_NOT_SUPPORTED;
    uint8_t* area = this->area();
    if (!area) return VGPU_ERROR_NO_DEVICE;
    if (!w.ram.empty()) std::memcpy(area, w.ram.data(), w.ram.size_bytes());
    return simple(RpcOp::MemcpySgWalk,
                  {htod, dptr, reinterpret_cast<uint64_t>(w.list), w.count, w.total, s, async, w.ram.size()}, nullptr,
                  w.ram.size_bytes());
}

Status RemoteBackend::memcpy_htod_sg(uint64_t dst, std::span<const memmap::HostRun> runs, SgStrategy how,
                                     BackendStream s, bool async) {
    return sg(true, dst, runs, how, s, async);
}

Status RemoteBackend::memcpy_dtoh_sg(uint64_t src, std::span<const memmap::HostRun> runs, SgStrategy how,
                                     BackendStream s, bool async) {
    return sg(false, src, runs, how, s, async);
}

Status RemoteBackend::memset_d8(uint64_t dptr, uint8_t value, uint64_t count, BackendStream s, bool async) {
    return simple(RpcOp::MemsetD8, {dptr, value, count, s, async});
}

Status RemoteBackend::memset_d32(uint64_t dptr, uint32_t value, uint64_t count, BackendStream s, bool async) {
    return simple(RpcOp::MemsetD32, {dptr, value, count, s, async});
}

// ---- modules and launches -----------------------------------------------------

Status RemoteBackend::module_load(std::span<const uint8_t> image, BackendModule* out) {
    if (image.size() >= opts_.data_bytes) return VGPU_ERROR_INVALID_VALUE; // the image and its NUL must fit
    uint8_t* area = this->area();
    if (!area) return VGPU_ERROR_NO_DEVICE;
    if (!image.empty()) std::memcpy(area, image.data(), image.size());
    area[image.size()] = 0;
    const Status st = created(call(RpcOp::ModuleLoad, {image.size()}, image.size() + 1), out);
    if (image.size() > kKeepBytes && ch_) ch_->trim(kKeepBytes);
    return st;
}

Status RemoteBackend::module_unload(BackendModule m) { return simple(RpcOp::ModuleUnload, {m}); }

Status RemoteBackend::module_get_function(BackendModule m, std::string_view name, BackendFunction* out,
                                          ParamLayout* layout) {
    if (name.size() > opts_.data_bytes) return VGPU_ERROR_INVALID_VALUE;
    uint8_t* area = this->area();
    if (!area) return VGPU_ERROR_NO_DEVICE;
    if (!name.empty()) std::memcpy(area, name.data(), name.size());
    const Reply r = call(RpcOp::ModuleGetFunction, {m, name.size()}, name.size());
    if (r.r.status != VGPU_SUCCESS) return static_cast<Status>(r.r.status);
    // The worker's (offset, size) pairs, checked before use like any reply.
    const uint64_t count = r.r.out[1];
    if (count > VGPU_MAX_KERNEL_PARAMS + 1 || count * 2 * sizeof(uint32_t) > opts_.data_bytes)
        return VGPU_ERROR_INVALID_VALUE;
    ParamLayout l;
    for (uint64_t i = 0; i < count; ++i) {
        uint32_t pair[2];
        std::memcpy(pair, ch_->data() + i * sizeof pair, sizeof pair);
        l.offsets.push_back(pair[0]);
        l.sizes.push_back(pair[1]);
    }
    *out = r.r.out[0];
    *layout = std::move(l);
    return VGPU_SUCCESS;
}

// Data area: the sizes (uint16 each), then each parameter at a 16-byte
// aligned offset, as the device model's own parameter storage keeps them.
Status RemoteBackend::launch(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                             std::span<void* const> params, std::span<const uint16_t> sizes) {
    if (params.size() != sizes.size()) return VGPU_ERROR_INVALID_VALUE;
    uint64_t total = align16(sizes.size() * sizeof(uint16_t));
    for (uint16_t n : sizes) total = align16(total + n);
    if (total > opts_.data_bytes) return VGPU_ERROR_INVALID_VALUE;
    uint8_t* area = this->area();
    if (!area) return VGPU_ERROR_NO_DEVICE;
    if (!sizes.empty()) std::memcpy(area, sizes.data(), sizes.size_bytes());
    uint64_t at = align16(sizes.size_bytes());
    for (size_t i = 0; i < params.size(); ++i) {
        if (sizes[i]) std::memcpy(area + at, params[i], sizes[i]);
        at = align16(at + sizes[i]);
    }
    auto pack = [](uint32_t lo, uint32_t hi) { return uint64_t{lo} | uint64_t{hi} << 32; };
    return simple(RpcOp::Launch,
                  {f, pack(grid.x, grid.y), pack(grid.z, block.x), pack(block.y, block.z), shared_bytes, s, params.size()},
                  nullptr, total);
}

// ---- streams and events -------------------------------------------------------

Status RemoteBackend::stream_create(uint32_t flags, BackendStream* out) {
    return created(call(RpcOp::StreamCreate, {flags}), out);
}

Status RemoteBackend::stream_synchronize(BackendStream s) { return simple(RpcOp::StreamSynchronize, {s}); }

Status RemoteBackend::stream_destroy(BackendStream s) { return simple(RpcOp::StreamDestroy, {s}); }

Status RemoteBackend::event_create(uint32_t flags, BackendEvent* out) {
    return created(call(RpcOp::EventCreate, {flags}), out);
}

Status RemoteBackend::event_record(BackendEvent e, BackendStream s) { return simple(RpcOp::EventRecord, {e, s}); }

Status RemoteBackend::event_synchronize(BackendEvent e) { return simple(RpcOp::EventSynchronize, {e}); }

Status RemoteBackend::event_elapsed_ms(BackendEvent start, BackendEvent end, float* ms) {
    uint64_t bits = 0;
    const Status st = simple(RpcOp::EventElapsedMs, {start, end}, &bits);
    if (st == VGPU_SUCCESS) {
        const auto b32 = static_cast<uint32_t>(bits);
        std::memcpy(ms, &b32, sizeof *ms);
    }
    return st;
}

Status RemoteBackend::event_destroy(BackendEvent e) { return simple(RpcOp::EventDestroy, {e}); }

Status RemoteBackend::inject_fault(WorkerFault f) { return simple(RpcOp::InjectFault, {static_cast<uint64_t>(f)}); }

} // namespace kvmgpu::vgpu
