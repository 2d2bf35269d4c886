// CudaBackend: context life cycle, guest RAM registration, recovery, and
// every operation but the scatter-gather strategies (cuda_backend_sg.cpp).
#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_status.h"

#include <chrono>
#include <cstdio>

#include "kvmtool-gpu/devices/vgpu/backends/embedded_fatbin.h"
#include "kvmtool-gpu/util/log.h"
#include "kvmtool-gpu/util/clock.h"

namespace kvmgpu::vgpu {

// The ABI promises status codes are CUresult values, one to one.
#define KVMGPU_SAME_CODE(v) static_assert(static_cast<int>(VGPU_##v) == static_cast<int>(CUDA_##v), #v)
KVMGPU_SAME_CODE(SUCCESS);
KVMGPU_SAME_CODE(ERROR_INVALID_VALUE);
KVMGPU_SAME_CODE(ERROR_OUT_OF_MEMORY);
KVMGPU_SAME_CODE(ERROR_NOT_INITIALIZED);
KVMGPU_SAME_CODE(ERROR_NO_DEVICE);
KVMGPU_SAME_CODE(ERROR_INVALID_DEVICE);
KVMGPU_SAME_CODE(ERROR_INVALID_IMAGE);
KVMGPU_SAME_CODE(ERROR_INVALID_CONTEXT);
KVMGPU_SAME_CODE(ERROR_INVALID_HANDLE);
KVMGPU_SAME_CODE(ERROR_NOT_FOUND);
KVMGPU_SAME_CODE(ERROR_NOT_READY);
KVMGPU_SAME_CODE(ERROR_ILLEGAL_ADDRESS);
KVMGPU_SAME_CODE(ERROR_LAUNCH_OUT_OF_RESOURCES);
KVMGPU_SAME_CODE(ERROR_LAUNCH_FAILED);
KVMGPU_SAME_CODE(ERROR_NOT_SUPPORTED);
KVMGPU_SAME_CODE(ERROR_UNKNOWN);
#undef KVMGPU_SAME_CODE
static_assert(sizeof(kvmgpu_copy_run) == 24);


std::unique_ptr<CudaBackend> CudaBackend::create(const CudaBackendOptions& opts, std::string* why) {
    std::string reason;
    const uint64_t t0 = now_ns();
    const CudaDriverApi* api = CudaDriverApi::get(&reason);
    const uint64_t t_driver = now_ns();
    auto fail = [&](std::string r) {
        if (why) *why = std::move(r);
        return nullptr;
    };
    if (!api) return fail(reason);
    std::unique_ptr<CudaBackend> b(new CudaBackend(*api, opts));
    CUresult r = api->cuDeviceGet(&b->dev_, opts.ordinal);
    if (r != CUDA_SUCCESS) return fail("cuDeviceGet(" + std::to_string(opts.ordinal) + "): " + api->describe(r));
    char name[256] = {};
    api->cuDeviceGetName(name, sizeof name - 1, b->dev_);
    b->device_name_ = name;
    int same_address = 0;
    api->cuDeviceGetAttribute(&same_address, CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, b->dev_);
    b->host_pointer_is_device_pointer_ = same_address != 0;
    if (b->make_context(&reason) != CUDA_SUCCESS) return fail(reason);
    b->start_ns_ = {t_driver - t0, now_ns() - t_driver - b->builtin_ns_, b->builtin_ns_};
    CUcontext popped;
    api->cuCtxPopCurrent(&popped); // the executor makes it current on its own thread
    return b;
}

CudaBackend::~CudaBackend() {
    if (!ctx_) return;
    api_.cuCtxSetCurrent(ctx_);
    drop_libraries(); // their handles go while the context is there
    free_context();
}

CUresult CudaBackend::make_context(std::string* why) {
    auto fail = [&](const char* what, CUresult r) {
        *why = std::string(what) + ": " + api_.describe(r);
        return r;
    };
    // Own context, not the primary one: VMs share no address space and no sticky error.
    CUresult r = api_.cuCtxCreate(&ctx_, nullptr, opts_.ctx_flags, dev_);
    if (r != CUDA_SUCCESS) return ctx_ = nullptr, fail("cuCtxCreate", r);
    if ((r = api_.cuStreamCreate(&internal_, CU_STREAM_DEFAULT)) != CUDA_SUCCESS) return fail("cuStreamCreate", r);
    for (int i = 0; i < 2; ++i) {
        if ((r = api_.cuMemHostAlloc(&bounce_[i], opts_.bounce_bytes, 0)) != CUDA_SUCCESS)
            return fail("cuMemHostAlloc (bounce buffer)", r);
        if ((r = api_.cuEventCreate(&bounce_done_[i], CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
            return fail("cuEventCreate", r);
    }
    if ((r = api_.cuEventCreate(&table_free_, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS) return fail("cuEventCreate", r);
#ifdef KVMGPU_HAVE_SG_FATBIN
    const uint64_t t_builtin = now_ns();
    // Not fatal: without it only the GatherKernel strategy is missing.
    if ((r = api_.cuModuleLoadData(&builtin_, kvmgpu_sg_fatbin)) != CUDA_SUCCESS) {
        log_warn("cuda backend: cannot load the embedded sg_kernels fatbin: %s", api_.describe(r).c_str());
        builtin_ = nullptr;
    } else if (api_.cuModuleGetFunction(&gather_fn_, builtin_, "kvmgpu_sg_gather") != CUDA_SUCCESS ||
               api_.cuModuleGetFunction(&scatter_fn_, builtin_, "kvmgpu_sg_scatter") != CUDA_SUCCESS) {
        gather_fn_ = scatter_fn_ = nullptr;
    }
    if (builtin_ && (r = load_walk()) != CUDA_SUCCESS)
        log_warn("cuda backend: no device walk: %s", api_.describe(r).c_str());
    builtin_ns_ = now_ns() - t_builtin;
#endif
    return CUDA_SUCCESS;
}

void CudaBackend::free_context() {
    // Destroying the context frees its memory, modules, streams and events;
    // registrations are undone first so the pages can be registered again.
    for (const auto& r : ram_.ranges())
        if (!lazy_.is_region(r.host)) api_.cuMemHostUnregister(r.host);
    for (const auto& piece : lazy_.registrations()) api_.cuMemHostUnregister(piece.host);
    drop_vmm();
    libraries_lost_context();
    api_.cuCtxDestroy(ctx_);
    ctx_ = nullptr;
    internal_ = nullptr;
    bounce_[0] = bounce_[1] = nullptr;
    bounce_done_[0] = bounce_done_[1] = nullptr;
    builtin_ = nullptr;
    gather_fn_ = scatter_fn_ = nullptr;
    table_host_ = nullptr;
    table_dev_ = 0;
    table_cap_ = 0;
    table_free_ = nullptr;
    walk_scan_fn_ = walk_offsets_fn_ = walk_units_fn_ = walk_copy_fn_ = nullptr;
    walk_stream_ = nullptr;
    for (int i = 0; i < 2; ++i) walk_scratch_[i] = 0, walk_scanned_[i] = walk_free_[i] = nullptr;
    walk_cap_ = walk_units_cap_ = 0;
    walk_next_ = 0;
    rejections_host_ = nullptr;
    rejections_dev_ = 0;
    rejections_seen_ = 0;
}

std::string CudaBackend::describe() const {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "CUDA backend: %s (ordinal %d), driver CUDA %d.%d, own context per VM; gather kernel %s; "
                  "device walk %s; cuMemcpyBatchAsync %s; up in %.1f ms (driver and cuInit %.1f, context %.1f, "
                  "built-in kernels %.1f)%s",
                  device_name_.c_str(), opts_.ordinal, api_.driver_version / 1000, api_.driver_version % 1000 / 10,
                  gather_fn_ ? "loaded" : "unavailable", has_device_walk() ? "loaded" : "unavailable",
                  has_batch() ? "present" : "absent", (start_ns_[0] + start_ns_[1] + start_ns_[2]) * 1e-6,
                  start_ns_[0] * 1e-6, start_ns_[1] * 1e-6, start_ns_[2] * 1e-6,
                  lost_ ? "; CONTEXT LOST after a sticky error" : "");
    return buf;
}

SgStrategy CudaBackend::default_sg_strategy() const {
    if (ram_.empty()) return SgStrategy::Coalesce;
    return has_device_walk() ? SgStrategy::DeviceWalk : gather_fn_ ? SgStrategy::GatherKernel : SgStrategy::Coalesce;
}

SgStrategy CudaBackend::auto_sg_strategy(uint64_t entries, uint64_t total_bytes) const {
    if (has_batch() && entries != 0 && total_bytes / entries >= kBatchMinAverageRun) return SgStrategy::Batch;
    return default_sg_strategy();
}

void CudaBackend::bind_thread() {
    api_.cuCtxSetCurrent(ctx_);
    // This thread makes every guest thread's calls, while each guest thread
    // keeps its own capture mode (answered in the guest library). Relaxed
    // here, so that a call a guest thread makes in relaxed mode during a
    // capture (PyTorch's allocator does) is not refused as unsafe.
    // A thread's mode, so set once per thread (bind_thread runs at every switch of device).
    static thread_local bool relaxed = false;
    const auto exchange = KVMGPU_CUDA_LATE(api_, cuThreadExchangeStreamCaptureMode, 10010);
    if (!relaxed && exchange) {
        CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
        relaxed = exchange(&mode) == CUDA_SUCCESS;
    }
}

Status CudaBackend::register_guest_ram(void* host, uint64_t bytes) {
    CUdeviceptr dev = 0;
    if (const Status s = register_range(host, bytes, &dev); s != VGPU_SUCCESS) return s;
    ram_.add(static_cast<uint8_t*>(host), bytes, dev);
    eager_bytes_ += bytes;
    return VGPU_SUCCESS;
}

Status CudaBackend::register_range(void* host, uint64_t bytes, CUdeviceptr* dev) {
    const uint64_t t0 = now_ns();
    // A lazy registration may come inside a guest's stream capture, where
    // the default (global) mode forbids it and would invalidate the capture.
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (api_.cuThreadExchangeStreamCaptureMode) api_.cuThreadExchangeStreamCaptureMode(&mode);
    CUresult r = api_.cuMemHostRegister(host, bytes, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    if (api_.cuThreadExchangeStreamCaptureMode) api_.cuThreadExchangeStreamCaptureMode(&mode);
    // Already registered: a context lost to a sticky error could not undo it.
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) return to_status(r);
    CU_TRY(api_.cuMemHostGetDevicePointer(dev, host, 0));
    register_ns_ += now_ns() - t0;
    return VGPU_SUCCESS;
}

// Lazily only where registered memory keeps its host address on the device
// (unified addressing): the window is then known before any registration.
Status CudaBackend::add_guest_ram(void* host, uint64_t bytes) {
    if (!host_pointer_is_device_pointer_) return register_guest_ram(host, bytes);
    lazy_.add_region(static_cast<uint8_t*>(host), bytes);
    ram_.add(static_cast<uint8_t*>(host), bytes, reinterpret_cast<uint64_t>(host));
    return VGPU_SUCCESS;
}

Status CudaBackend::register_lazy_piece(uint8_t* host, uint64_t bytes) {
    CUdeviceptr dev = 0;
    const Status s = register_range(host, bytes, &dev);
    if (s == VGPU_SUCCESS && dev != reinterpret_cast<uint64_t>(host)) {
        log_error("cuda backend: registered guest RAM at %p got device address %#llx: no lazy registration here",
                  static_cast<void*>(host), static_cast<unsigned long long>(dev));
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    return s;
}

Status CudaBackend::prepare_guest_ram(const void* host, uint64_t bytes) {
    auto register_piece = [this](uint8_t* p, uint64_t n) { return register_lazy_piece(p, n); };
    return host ? lazy_.prepare(host, bytes, register_piece) : lazy_.prepare_all(register_piece);
}

Status CudaBackend::prepare_guest_ram_in_one(const void* host, uint64_t bytes) {
    bool idle = false;
    auto drop_piece = [&](uint8_t* p, uint64_t) {
        // Copies in flight may still read what is undone: the device finishes first.
        if (!idle) CU_TRY(api_.cuCtxSynchronize());
        idle = true;
        return to_status(api_.cuMemHostUnregister(p));
    };
    return lazy_.prepare_as_one(host, bytes, [this](uint8_t* p, uint64_t n) { return register_lazy_piece(p, n); },
                                drop_piece);
}

Status CudaBackend::unregister_guest_ram(void* host) {
    if (!ram_.remove(static_cast<uint8_t*>(host))) return VGPU_ERROR_HOST_MEMORY_NOT_REGISTERED;
    // A portable registration is the process's: with several devices (one
    // backend each) the first backend to unregister it undoes it for all.
    const CUresult r = api_.cuMemHostUnregister(host);
    return r == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED ? VGPU_SUCCESS : to_status(r);
}

Status CudaBackend::device_attribute(int attribute, int* out) {
    return to_status(api_.cuDeviceGetAttribute(out, static_cast<CUdevice_attribute>(attribute), dev_));
}

Status CudaBackend::device_name(char* buf, size_t len) {
    return to_status(api_.cuDeviceGetName(buf, static_cast<int>(len), dev_));
}

Status CudaBackend::device_total_mem(uint64_t* out) {
    size_t total = 0;
    CU_TRY(api_.cuDeviceTotalMem(&total, dev_));
    *out = total;
    return VGPU_SUCCESS;
}

Status CudaBackend::ctx_synchronize() { return with_walk_refusals(to_status(api_.cuCtxSynchronize())); }

Status CudaBackend::mem_alloc(uint64_t bytes, uint64_t* dptr) {
    CUdeviceptr p = 0;
    CU_TRY(api_.cuMemAlloc(&p, bytes));
    *dptr = p;
    return VGPU_SUCCESS;
}

Status CudaBackend::mem_free(uint64_t dptr) { return to_status(api_.cuMemFree(dptr)); }

Status CudaBackend::mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes) {
    size_t f = 0, t = 0;
    CU_TRY(api_.cuMemGetInfo(&f, &t));
    *free_bytes = f, *total_bytes = t;
    return VGPU_SUCCESS;
}

// Enqueued successfully: wait for the stream unless the guest asked not to.
Status CudaBackend::finish(CUresult r, CUstream s, bool async) {
    if (r != CUDA_SUCCESS || async) return to_status(r);
    return to_status(api_.cuStreamSynchronize(s));
}

// One copy per registration the host range lies in: a copy spanning two
// would be staged by the driver as pageable memory.
Status CudaBackend::memcpy_htod(uint64_t dst, const void* src, uint64_t bytes, BackendStream s, bool async) {
    if (const Status st = prepare_guest_ram(src, bytes); st != VGPU_SUCCESS) return st;
    CUresult r = CUDA_SUCCESS;
    lazy_.for_each_piece(src, bytes, [&](uint64_t off, uint64_t len) {
        if (r == CUDA_SUCCESS) r = api_.cuMemcpyHtoDAsync(dst + off, static_cast<const uint8_t*>(src) + off, len, stream(s));
    });
    return finish(r, stream(s), async);
}

Status CudaBackend::memcpy_dtoh(void* dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) {
    if (const Status st = prepare_guest_ram(dst, bytes); st != VGPU_SUCCESS) return st;
    CUresult r = CUDA_SUCCESS;
    lazy_.for_each_piece(dst, bytes, [&](uint64_t off, uint64_t len) {
        if (r == CUDA_SUCCESS) r = api_.cuMemcpyDtoHAsync(static_cast<uint8_t*>(dst) + off, src + off, len, stream(s));
    });
    return finish(r, stream(s), async);
}

Status CudaBackend::memcpy_dtod(uint64_t dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) {
    return finish(api_.cuMemcpyDtoDAsync(dst, src, bytes, stream(s)), stream(s), async);
}

Status CudaBackend::memset(uint64_t dptr, uint32_t value, uint32_t element_bytes, uint64_t count, BackendStream s,
                           bool async) {
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    switch (element_bytes) {
    case 1: r = api_.cuMemsetD8Async(dptr, static_cast<unsigned char>(value), count, stream(s)); break;
    case 2: r = api_.cuMemsetD16Async(dptr, static_cast<unsigned short>(value), count, stream(s)); break;
    case 4: r = api_.cuMemsetD32Async(dptr, value, count, stream(s)); break;
    }
    return finish(r, stream(s), async);
}

Status CudaBackend::memset_2d(uint64_t dptr, uint64_t pitch, uint32_t value, uint32_t element_bytes, uint64_t width,
                              uint64_t height, BackendStream s, bool async) {
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    switch (element_bytes) {
    case 1:
        if (auto fn = KVMGPU_CUDA_LATE(api_, cuMemsetD2D8Async, 3020))
            r = fn(dptr, pitch, static_cast<unsigned char>(value), width, height, stream(s));
        break;
    case 2:
        if (auto fn = KVMGPU_CUDA_LATE(api_, cuMemsetD2D16Async, 3020))
            r = fn(dptr, pitch, static_cast<unsigned short>(value), width, height, stream(s));
        break;
    case 4:
        if (auto fn = KVMGPU_CUDA_LATE(api_, cuMemsetD2D32Async, 3020)) r = fn(dptr, pitch, value, width, height, stream(s));
        break;
    }
    return finish(r, stream(s), async);
}

Status CudaBackend::stream_write_value(BackendStream s, uint64_t dptr, uint64_t value, uint32_t bytes, uint32_t flags,
                                       bool async) {
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    if (bytes == 4) {
        if (auto fn = KVMGPU_CUDA_LATE(api_, cuStreamWriteValue32, 11070))
            r = fn(stream(s), dptr, static_cast<cuuint32_t>(value), flags);
    } else if (auto fn = KVMGPU_CUDA_LATE(api_, cuStreamWriteValue64, 11070)) {
        r = fn(stream(s), dptr, value, flags);
    }
    return finish(r, stream(s), async);
}

Status CudaBackend::stream_wait_value(BackendStream s, uint64_t dptr, uint64_t value, uint32_t bytes, uint32_t flags,
                                      bool async) {
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    if (bytes == 4) {
        if (auto fn = KVMGPU_CUDA_LATE(api_, cuStreamWaitValue32, 11070))
            r = fn(stream(s), dptr, static_cast<cuuint32_t>(value), flags);
    } else if (auto fn = KVMGPU_CUDA_LATE(api_, cuStreamWaitValue64, 11070)) {
        r = fn(stream(s), dptr, value, flags);
    }
    return finish(r, stream(s), async);
}

Status CudaBackend::module_load(std::span<const uint8_t> image, BackendModule* out) {
    CUmodule m = nullptr;
    CU_TRY(api_.cuModuleLoadData(&m, image.data())); // a NUL follows the image (gpu_backend.h)
    *out = reinterpret_cast<BackendModule>(m);
    return VGPU_SUCCESS;
}

Status CudaBackend::module_unload(BackendModule m) { return to_status(api_.cuModuleUnload(reinterpret_cast<CUmodule>(m))); }

// A kernel's parameters as the module defines them. The driver answers
// CUDA_ERROR_INVALID_VALUE past the last parameter; a kernel's parameters
// fill at most VGPU_MAX_PARAM_BYTES, one byte each at the least.
Status CudaBackend::function_layout(BackendFunction function, ParamLayout* layout) {
    const auto f = reinterpret_cast<CUfunction>(function);
    ParamLayout l;
    for (size_t i = 0; i < VGPU_MAX_PARAM_BYTES; ++i) {
        size_t offset = 0, size = 0;
        const CUresult r = api_.cuFuncGetParamInfo(f, i, &offset, &size);
        if (r == CUDA_ERROR_INVALID_VALUE) break;
        CU_TRY(r);
        l.offsets.push_back(static_cast<uint32_t>(offset));
        l.sizes.push_back(static_cast<uint32_t>(size));
    }
    *layout = std::move(l);
    return VGPU_SUCCESS;
}

Status CudaBackend::module_get_function(BackendModule m, std::string_view name, BackendFunction* out,
                                        ParamLayout* layout) {
    const std::string n(name); // the driver wants a NUL-terminated name
    CUfunction f = nullptr;
    CU_TRY(api_.cuModuleGetFunction(&f, reinterpret_cast<CUmodule>(m), n.c_str()));
    if (const Status s = function_layout(reinterpret_cast<BackendFunction>(f), layout); s != VGPU_SUCCESS) return s;
    *out = reinterpret_cast<BackendFunction>(f);
    return VGPU_SUCCESS;
}

Status CudaBackend::module_functions(BackendModule m, std::vector<BackendFunction>* out) {
    const auto count_of = KVMGPU_CUDA_LATE(api_, cuModuleGetFunctionCount, 12040);
    const auto enumerate = KVMGPU_CUDA_LATE(api_, cuModuleEnumerateFunctions, 12040);
    if (!count_of || !enumerate) return VGPU_ERROR_NOT_SUPPORTED;
    unsigned count = 0;
    CU_TRY(count_of(&count, reinterpret_cast<CUmodule>(m)));
    std::vector<CUfunction> fs(count);
    if (count > 0) CU_TRY(enumerate(fs.data(), count, reinterpret_cast<CUmodule>(m)));
    out->clear();
    for (CUfunction f : fs) out->push_back(reinterpret_cast<BackendFunction>(f));
    return VGPU_SUCCESS;
}

Status CudaBackend::function_attribute(BackendFunction f, int attribute, int* out) {
    return to_status(
        api_.cuFuncGetAttribute(out, static_cast<CUfunction_attribute>(attribute), reinterpret_cast<CUfunction>(f)));
}

Status CudaBackend::set_function_attribute(BackendFunction f, int attribute, int value) {
    return to_status(
        api_.cuFuncSetAttribute(reinterpret_cast<CUfunction>(f), static_cast<CUfunction_attribute>(attribute), value));
}

Status CudaBackend::module_get_global(BackendModule m, std::string_view name, uint64_t* dptr, uint64_t* bytes) {
    const std::string n(name);
    CUdeviceptr d = 0;
    size_t size = 0;
    CU_TRY(api_.cuModuleGetGlobal(&d, &size, reinterpret_cast<CUmodule>(m), n.c_str()));
    *dptr = d, *bytes = size;
    return VGPU_SUCCESS;
}

Status CudaBackend::peer_can_access(GpuBackend& peer, int* out) {
    auto* other = dynamic_cast<CudaBackend*>(&peer);
    if (!other) return VGPU_ERROR_NOT_SUPPORTED;
    return to_status(api_.cuDeviceCanAccessPeer(out, dev_, other->dev_));
}

// This context (current: the device model selected it) maps the peer's memory.
Status CudaBackend::peer_set_access(GpuBackend& peer, bool enable) {
    auto* other = dynamic_cast<CudaBackend*>(&peer);
    if (!other) return VGPU_ERROR_NOT_SUPPORTED;
    return to_status(enable ? api_.cuCtxEnablePeerAccess(other->ctx_, 0) : api_.cuCtxDisablePeerAccess(other->ctx_));
}

Status CudaBackend::memcpy_with_peer(GpuBackend& peer, bool to_peer, uint64_t dst, uint64_t src, uint64_t bytes,
                                     BackendStream s, bool async) {
    auto* other = dynamic_cast<CudaBackend*>(&peer);
    if (!other) return VGPU_ERROR_NOT_SUPPORTED;
    CUcontext dst_ctx = to_peer ? other->ctx_ : ctx_, src_ctx = to_peer ? ctx_ : other->ctx_;
    return finish(api_.cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, bytes, stream(s)), stream(s), async);
}

Status CudaBackend::run_launch(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                               std::span<void* const> params, std::span<const uint16_t>, LaunchMode mode) {
    if (mode.has_cluster)
        return launch_ex(f, grid, block, shared_bytes, s, const_cast<void**>(params.data()), nullptr, mode);
    if (mode.cooperative)
        return to_status(api_.cuLaunchCooperativeKernel(reinterpret_cast<CUfunction>(f), grid.x, grid.y, grid.z, block.x,
                                                        block.y, block.z, shared_bytes, stream(s),
                                                        const_cast<void**>(params.data())));
    return to_status(api_.cuLaunchKernel(reinterpret_cast<CUfunction>(f), grid.x, grid.y, grid.z, block.x, block.y,
                                         block.z, shared_bytes, stream(s), const_cast<void**>(params.data()), nullptr));
}

Status CudaBackend::run_launch_packed(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes,
                                      BackendStream s, std::span<const uint8_t> buffer, const ParamLayout& layout,
                                      LaunchMode mode) {
    if (mode.cooperative || buffer.empty())
        return GpuBackend::run_launch_packed(f, grid, block, shared_bytes, s, buffer, layout, mode);
    size_t bytes = buffer.size();
    // The driver copies the buffer during the call.
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, const_cast<uint8_t*>(buffer.data()), CU_LAUNCH_PARAM_BUFFER_SIZE,
                     &bytes, CU_LAUNCH_PARAM_END};
    if (mode.has_cluster) return launch_ex(f, grid, block, shared_bytes, s, nullptr, extra, mode);
    return to_status(api_.cuLaunchKernel(reinterpret_cast<CUfunction>(f), grid.x, grid.y, grid.z, block.x, block.y,
                                         block.z, shared_bytes, stream(s), nullptr, extra));
}

Status CudaBackend::launch_ex(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                              void** params, void** extra, const LaunchMode& mode) {
    const auto launch = KVMGPU_CUDA_LATE(api_, cuLaunchKernelEx, 11060);
    if (!launch) return VGPU_ERROR_NOT_SUPPORTED;
    CUlaunchAttribute attrs[3] = {};
    unsigned n = 0;
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n++].value.clusterDim = {mode.cluster.x, mode.cluster.y, mode.cluster.z};
    if (mode.cluster_scheduling != 0) {
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
        attrs[n++].value.clusterSchedulingPolicyPreference =
            static_cast<CUclusterSchedulingPolicy>(mode.cluster_scheduling);
    }
    if (mode.cooperative) {
        attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attrs[n++].value.cooperative = 1;
    }
    CUlaunchConfig config = launch_config(grid, block, shared_bytes);
    config.hStream = stream(s);
    config.attrs = attrs;
    config.numAttrs = n;
    return to_status(launch(&config, reinterpret_cast<CUfunction>(f), params, extra));
}

Status CudaBackend::stream_create(uint32_t flags, BackendStream* out) {
    CUstream st = nullptr;
    CU_TRY(api_.cuStreamCreate(&st, flags));
    *out = reinterpret_cast<BackendStream>(st);
    return VGPU_SUCCESS;
}

Status CudaBackend::stream_synchronize(BackendStream s) {
    return with_walk_refusals(to_status(api_.cuStreamSynchronize(stream(s))));
}

Status CudaBackend::stream_destroy(BackendStream s) { return to_status(api_.cuStreamDestroy(stream(s))); }

Status CudaBackend::event_create(uint32_t flags, BackendEvent* out) {
    CUevent e = nullptr;
    CU_TRY(api_.cuEventCreate(&e, flags));
    *out = reinterpret_cast<BackendEvent>(e);
    return VGPU_SUCCESS;
}

Status CudaBackend::event_record(BackendEvent e, BackendStream s) {
    return to_status(api_.cuEventRecord(reinterpret_cast<CUevent>(e), stream(s)));
}

Status CudaBackend::event_synchronize(BackendEvent e) {
    return with_walk_refusals(to_status(api_.cuEventSynchronize(reinterpret_cast<CUevent>(e))));
}

Status CudaBackend::event_elapsed_ms(BackendEvent start, BackendEvent end, float* ms) {
    return to_status(api_.cuEventElapsedTime(ms, reinterpret_cast<CUevent>(start), reinterpret_cast<CUevent>(end)));
}

Status CudaBackend::event_destroy(BackendEvent e) { return to_status(api_.cuEventDestroy(reinterpret_cast<CUevent>(e))); }

Status CudaBackend::stream_query(BackendStream s) { return to_status(api_.cuStreamQuery(stream(s))); }

Status CudaBackend::stream_wait_event(BackendStream s, BackendEvent e) {
    return to_status(api_.cuStreamWaitEvent(stream(s), reinterpret_cast<CUevent>(e), 0));
}

Status CudaBackend::event_query(BackendEvent e) { return to_status(api_.cuEventQuery(reinterpret_cast<CUevent>(e))); }

bool CudaBackend::recover_from(Status s) {
    const bool execution_error = (s >= 700 && s < 800) || s == VGPU_ERROR_UNKNOWN;
    if (!execution_error || !ctx_) return false;
    // Sticky means the context itself now fails; a launch that merely could
    // not start (e.g. too many resources) leaves it working.
    if (api_.cuCtxSynchronize() == CUDA_SUCCESS) return false;
    log_warn("cuda backend: context lost after %s (%u): re-creating it", status_name(s), s);
    const std::vector<GuestRamMap::Range> ranges = ram_.ranges();
    const std::vector<LazyRegistration::Piece> lazy_pieces = lazy_.registrations();
    free_context();
    ram_.clear();
    lazy_.forget_registrations();
    eager_bytes_ = 0;
    std::string why;
    if (make_context(&why) != CUDA_SUCCESS) {
        // Seen with driver 580 after an illegal address: cuda.h documents
        // 700/719 as needing a process restart, and cuCtxCreate itself then
        // fails. Every later call fails cleanly (no context) instead.
        lost_ = true;
        log_error("cuda backend: cannot re-create the context (%s): this process's CUDA is unusable after the "
                  "sticky error; the vGPU fails every command from now on",
                  why.c_str());
        return true; // every handle is gone either way
    }
    for (const auto& r : ranges) {
        if (lazy_.is_region(r.host)) {
            ram_.add(r.host, r.bytes, r.dev); // the window stays; its registered pieces come back below
        } else if (register_guest_ram(r.host, r.bytes) != VGPU_SUCCESS) {
            log_warn("cuda backend: re-registering %llu bytes of guest RAM failed", static_cast<unsigned long long>(r.bytes));
        }
    }
    for (const auto& piece : lazy_pieces)
        if (prepare_guest_ram(piece.host, piece.bytes) != VGPU_SUCCESS)
            log_warn("cuda backend: re-registering %llu bytes of guest RAM failed", static_cast<unsigned long long>(piece.bytes));
    return true;
}

} // namespace kvmgpu::vgpu
