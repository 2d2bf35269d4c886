// The GpuBackend of a real GPU: the CUDA Driver API (loaded at run time,
// see cuda_driver_api.h), one CUDA context per instance (cuCtxCreate, not
// the shared primary context, so VMs never share an address space or a
// sticky error). Guest RAM is registered (PORTABLE | DEVICEMAP) so copies
// are DMA straight from guest RAM and kernels can read it: by default as
// commands first reach each part of it (lazy_registration.h).
//
// Scatter-gather strategies:
//   PerChunk / Coalesce - one cuMemcpy*Async per run (the device model
//                         decides whether runs were coalesced);
//   Bounce              - GViM-style 2 copies: runs packed by the CPU into
//                         two pinned buffers in turn, each sent as one copy;
//   Batch               - one cuMemcpyBatchAsync (NOT_SUPPORTED without it);
//   GatherKernel        - sg_kernels.cu reads/writes guest RAM through its
//                         zero-copy mapping; run table uploaded per transfer
//                         (NOT_SUPPORTED if the fatbin was not built or the
//                         RAM is not device-mapped).
//   DeviceWalk          - memcpy_sg_walk(): the GPU reads and checks the
//                         guest's list itself (sg_walk.h); the VMM's work is
//                         O(1) per transfer. AUTO's pick when it is loaded.
// Not thread-safe: bind_thread() on the executor, then call from there.
// Sticky errors: see recover_from().
#pragma once

#include <cuda.h>

#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/array_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_driver_api.h"
#include "kvmtool-gpu/devices/vgpu/backends/cuda_graphs.h"
#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/guest_ram_map.h"
#include "kvmtool-gpu/devices/vgpu/backends/lazy_registration.h"
#include "kvmtool-gpu/devices/vgpu/backends/sg_copy_run.h"
#include "kvmtool-gpu/devices/vgpu/backends/virtual_memory_backend.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

// A launch's shape as the CUlaunchConfig the driver's Ex calls take (no
// stream, no attributes: each caller adds its own).
inline CUlaunchConfig launch_config(Dim3 grid, Dim3 block, uint32_t shared_bytes) {
    CUlaunchConfig config{};
    config.gridDimX = grid.x, config.gridDimY = grid.y, config.gridDimZ = grid.z;
    config.blockDimX = block.x, config.blockDimY = block.y, config.blockDimZ = block.z;
    config.sharedMemBytes = shared_bytes;
    return config;
}

struct CudaBackendOptions {
    int ordinal = 0;                      // which GPU
    unsigned ctx_flags = 0;               // CU_CTX_SCHED_* (0: driver's choice)
    uint64_t bounce_bytes = 4ull << 20;   // each of the two Bounce buffers
    uint64_t gather_piece = 32ull << 10;  // GatherKernel splits runs into pieces this large
};

class CudaBackend final : public GpuBackend, public VirtualMemoryBackend, public ArrayBackend {
public:
    // nullptr with a one-line reason when there is no driver, no device, or
    // the context cannot be made.
    static std::unique_ptr<CudaBackend> create(const CudaBackendOptions& opts, std::string* why);
    ~CudaBackend() override;

    uint32_t id() const override { return VGPU_BACKEND_CUDA; }
    std::string describe() const override;
    bool real_kernels() const override { return true; }
    SgStrategy default_sg_strategy() const override;
    // Lists whose entries average kBatchMinAverageRun or more go to the
    // copy engine as one batch; shorter ones to the device walk.
    SgStrategy auto_sg_strategy(uint64_t entries, uint64_t total_bytes) const override;
    // batch_run_probe on the H100 (2026-11-24): a batch of shuffled 512 KiB
    // runs moves at 95.4% (htod) / 95.9% (dtoh) of one contiguous copy, 256
    // KiB runs at 90.9% / 91.9%; the walk reaches 91-95% on any list.
    static constexpr uint64_t kBatchMinAverageRun = 512 << 10;
    void bind_thread() override;

    Status register_guest_ram(void* host, uint64_t bytes) override;
    Status add_guest_ram(void* host, uint64_t bytes) override;
    Status prepare_guest_ram(const void* host, uint64_t bytes) override;
    Status prepare_guest_ram_in_one(const void* host, uint64_t bytes) override;
    uint64_t registered_bytes() const override { return eager_bytes_ + lazy_.registered_bytes(); }
    Status unregister_guest_ram(void* host) override;
    uint64_t register_ns() const override { return register_ns_; }
    uint64_t guest_ram_device_address(const void* host) const override { return ram_.device_address(host); }

    Status device_attribute(int attribute, int* out) override;
    Status device_name(char* buf, size_t len) override;
    Status device_total_mem(uint64_t* out) override;
    Status ctx_synchronize() override;

    Status mem_alloc(uint64_t bytes, uint64_t* dptr) override;
    Status mem_free(uint64_t dptr) override;
    Status mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes) override;

    Status memcpy_htod(uint64_t dst, const void* src, uint64_t bytes, BackendStream s, bool async) override;
    Status memcpy_dtoh(void* dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) override;
    Status memcpy_dtod(uint64_t dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) override;
    Status memcpy_htod_sg(uint64_t dst, std::span<const memmap::HostRun> runs, SgStrategy how, BackendStream s,
                          bool async) override;
    Status memcpy_dtoh_sg(uint64_t src, std::span<const memmap::HostRun> runs, SgStrategy how, BackendStream s,
                          bool async) override;
    Status memcpy_sg_walk(bool htod, uint64_t dptr, const SgWalk& walk, BackendStream s, bool async) override;
    Status memset(uint64_t dptr, uint32_t value, uint32_t element_bytes, uint64_t count, BackendStream s,
                  bool async) override;
    Status memset_2d(uint64_t dptr, uint64_t pitch, uint32_t value, uint32_t element_bytes, uint64_t width,
                     uint64_t height, BackendStream s, bool async) override;
    Status stream_write_value(BackendStream s, uint64_t dptr, uint64_t value, uint32_t bytes, uint32_t flags,
                              bool async) override;
    Status stream_wait_value(BackendStream s, uint64_t dptr, uint64_t value, uint32_t bytes, uint32_t flags,
                             bool async) override;

    Status module_load(std::span<const uint8_t> image, BackendModule* out) override;
    Status module_unload(BackendModule m) override;
    Status module_get_function(BackendModule m, std::string_view name, BackendFunction* out,
                               ParamLayout* layout) override;
    Status module_functions(BackendModule m, std::vector<BackendFunction>* out) override;
    Status function_layout(BackendFunction f, ParamLayout* layout) override;
    Status function_attribute(BackendFunction f, int attribute, int* out) override;
    Status set_function_attribute(BackendFunction f, int attribute, int value) override;
    Status module_get_global(BackendModule m, std::string_view name, uint64_t* dptr, uint64_t* bytes) override;
    // Every device call of KVMGPU_BACKEND_DEVICE_CALLS (gpu_backend.h), one
    // driver call each on this backend's context: cuda_backend_limits.cpp
    // (occupancy, context limits, P2P attributes between two CUDA
    // backends), cuda_backend_arrays.cpp (cuMemcpy3DAsync, or cuMemcpy2DAsync for
    // one slice between host and device memory: guest RAM
    // is registered, so a host side stays asynchronous).
    KVMGPU_BACKEND_DEVICE_CALLS(KVMGPU_BACKEND_OVERRIDE)
    // Arrays (cuArray3DCreate), texture and surface objects (cuTexObjectCreate,
    // cuSurfObjectCreate), in cuda_backend_arrays.cpp.
    ArrayBackend* arrays() override { return this; }
    Status array_create(const ArrayShape& shape, BackendArray* out) override;
    Status array_destroy(BackendArray a) override;
    Status sampled_object_create(const TextureSpec& spec, bool surface, uint64_t* out) override;
    Status sampled_object_destroy(uint64_t object, bool surface) override;
    // The cuMem* virtual memory calls, one driver call each (cuda_backend_vmm.cpp).
    VirtualMemoryBackend* virtual_memory() override { return this; }
    Status vmm_granularity(uint64_t* out) override;
    Status vmm_reserve(uint64_t bytes, uint64_t align, uint64_t fixed, uint64_t* va) override;
    Status vmm_free_reservation(uint64_t va, uint64_t bytes) override;
    Status vmm_create(uint64_t bytes, bool* compressible, uint64_t* handle) override;
    Status vmm_release(uint64_t handle) override;
    Status vmm_map(uint64_t va, uint64_t bytes, uint64_t handle) override;
    Status vmm_unmap(uint64_t va, uint64_t bytes) override;
    Status vmm_set_access(uint64_t va, uint64_t bytes, uint32_t flags) override;
    // Between two CUDA backends (contexts), as the driver does them:
    // cuMemcpyPeerAsync goes over the bus where peer access allows, and
    // the driver stages it itself where not.
    Status peer_can_access(GpuBackend& peer, int* out) override;
    Status peer_set_access(GpuBackend& peer, bool enable) override;
    Status memcpy_with_peer(GpuBackend& peer, bool to_peer, uint64_t dst, uint64_t src, uint64_t bytes, BackendStream s,
                            bool async) override;

    Status stream_create(uint32_t flags, BackendStream* out) override;
    Status stream_synchronize(BackendStream s) override;
    Status stream_destroy(BackendStream s) override;
    Status stream_query(BackendStream s) override;
    Status stream_wait_event(BackendStream s, BackendEvent e) override;
    Status stream_set_attribute(BackendStream s, uint32_t attribute, const vgpu_stream_attr_value& v) override;
    Status stream_get_attribute(BackendStream s, uint32_t attribute, vgpu_stream_attr_value* out) override;
    Status event_create(uint32_t flags, BackendEvent* out) override;
    Status event_record(BackendEvent e, BackendStream s) override;
    Status event_synchronize(BackendEvent e) override;
    Status event_elapsed_ms(BackendEvent start, BackendEvent end, float* ms) override;
    Status event_destroy(BackendEvent e) override;
    Status event_query(BackendEvent e) override;

    // Execution errors (700..799, UNKNOWN) that leave the context failing
    // cuCtxSynchronize: destroy it, make a new one, re-register guest RAM.
    // With driver 580 an illegal address poisons the whole process (cuda.h:
    // "the process must be terminated and relaunched"): the new context
    // cannot be made, context_lost() turns true and every later call fails
    // with an error status. So by default each VM's CUDA backend runs in a
    // GPU worker process of its own (WorkerEngine), which the VMM replaces
    // when this happens; inline (--gpu-worker inline) CUDA stays lost for
    // the VMM process.
    bool recover_from(Status s) override;
    bool context_lost() const { return lost_; }
    // The driver's own graphs and capture (cuda_graphs.h), where it has every call.
    GraphBackend* graphs() override { return graphs_.available() ? &graphs_ : nullptr; }

    bool has_gather_kernel() const { return gather_fn_ != nullptr; }
    bool has_device_walk() const { return walk_copy_fn_ != nullptr && rejections_host_ != nullptr; }
    bool has_batch() const { return api_.cuMemcpyBatchAsync != nullptr; }
    const CudaDriverApi& driver_api() const { return api_; }

protected:
    Status run_launch(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                      std::span<void* const> params, std::span<const uint16_t> sizes, LaunchMode mode) override;
    // The buffer goes to the driver as cuLaunchKernel's `extra`, unread here
    // (cooperative launches take no `extra`: the default's pointers).
    Status run_launch_packed(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                             std::span<const uint8_t> buffer, const ParamLayout& layout, LaunchMode mode) override;
    // A clustered launch: cuLaunchKernelEx with the cluster's attributes
    // (and COOPERATIVE where asked), the parameters as kernelParams or the
    // packed buffer as `extra`.
    Status launch_ex(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                     void** params, void** extra, const LaunchMode& mode);

private:
    // One box of memcpy_3d, enqueued (cuda_backend_arrays.cpp).
    CUresult copy_box(const Copy3D& copy, CUstream s);
    CudaBackend(const CudaDriverApi& api, const CudaBackendOptions& opts) : api_(api), opts_(opts) {}
    CUresult make_context(std::string* why); // leaves it current on this thread
    void free_context();
    static CUstream stream(BackendStream s) { return reinterpret_cast<CUstream>(s); }
    Status finish(CUresult r, CUstream s, bool async);
    // cuMemHostRegister (PORTABLE | DEVICEMAP) and the range's device address.
    Status register_range(void* host, uint64_t bytes, CUdeviceptr* dev);
    // A lazy registration's piece: registered, and kept at its host address on the device.
    Status register_lazy_piece(uint8_t* host, uint64_t bytes);
    // The runs, prepared, cut where lazy registrations meet (split_runs_ or runs itself).
    Status prepare_runs(std::span<const memmap::HostRun> runs, std::span<const memmap::HostRun>* out);

    // cuda_backend_sg.cpp
    Status sg_each(CUdeviceptr dptr, std::span<const memmap::HostRun> runs, CUstream s, bool htod, bool async);
    Status sg_bounce_htod(CUdeviceptr dst, std::span<const memmap::HostRun> runs, CUstream s, bool async);
    Status sg_bounce_dtoh(CUdeviceptr src, std::span<const memmap::HostRun> runs, CUstream s);
    Status sg_batch(CUdeviceptr dptr, std::span<const memmap::HostRun> runs, CUstream s, bool htod, bool async);
    Status sg_gather(CUdeviceptr dptr, std::span<const memmap::HostRun> runs, CUstream s, bool htod, bool async);
    Status reserve_run_table(uint64_t entries);

    // cuda_backend_walk.cpp
    CUresult load_walk(); // at context creation; not fatal
    Status reserve_walk_scratch(uint64_t entries, uint64_t units);
    // VGPU_ERROR_INVALID_VALUE once for each batch of walks the GPU refused
    // since the last call; `s` when it is already an error.
    Status with_walk_refusals(Status s);

    const CudaDriverApi& api_;
    const CudaBackendOptions opts_;
    CUdevice dev_ = 0;
    CUcontext ctx_ = nullptr;
    std::string device_name_;
    GuestRamMap ram_; // guest RAM's zero-copy windows (lazy ones included)
    LazyRegistration lazy_;
    RateLimiter copy_refusals_logged_{5}; // a guest may repeat a refused copy at will
    bool host_pointer_is_device_pointer_ = false; // registered memory keeps its address on the device
    uint64_t register_ns_ = 0, eager_bytes_ = 0;
    uint64_t builtin_ns_ = 0;                // loading the built-in kernels (make_context)
    std::array<uint64_t, 3> start_ns_{};     // create(): driver and cuInit, context, built-in kernels
    std::vector<memmap::HostRun> split_runs_; // SG runs cut where lazy registrations meet
    bool lost_ = false; // a sticky error and no new context could be made

    // Per-context helpers, re-made with the context.
    CUstream internal_ = nullptr; // Batch needs a non-NULL stream
    void* bounce_[2] = {nullptr, nullptr};
    CUevent bounce_done_[2] = {nullptr, nullptr};
    CUmodule builtin_ = nullptr;
    CUfunction gather_fn_ = nullptr, scatter_fn_ = nullptr;
    kvmgpu_copy_run* table_host_ = nullptr; // pinned staging for the run table
    CUdeviceptr table_dev_ = 0;
    uint64_t table_cap_ = 0;      // entries both can hold
    CUevent table_free_ = nullptr; // recorded after the last kernel that read the table
    CUfunction walk_scan_fn_ = nullptr, walk_offsets_fn_ = nullptr, walk_units_fn_ = nullptr, walk_copy_fn_ = nullptr;
    // Two scratch slots, used in turn, so that one walk's list is read and
    // scanned on walk_stream_ while the previous walk's copy still runs.
    CUstream walk_stream_ = nullptr;
    CUdeviceptr walk_scratch_[2] = {0, 0}; // see kvmgpu_walk_params for the parts
    CUevent walk_scanned_[2] = {nullptr, nullptr}; // on walk_stream_: the slot's list is scanned
    CUevent walk_free_[2] = {nullptr, nullptr};    // on the copy's stream: its copy no longer reads the slot
    uint64_t walk_cap_ = 0, walk_units_cap_ = 0; // entries and copy units each slot holds
    unsigned walk_next_ = 0;
    volatile uint32_t* rejections_host_ = nullptr; // mapped: the GPU counts refused lists here
    CUdeviceptr rejections_dev_ = 0;
    uint32_t rejections_seen_ = 0;

    // What the VM holds through the cuMem* calls, given back with the
    // context (they are the process's, not the context's, in the driver).
    bool vmm_ready() const;
    void drop_vmm();
    std::map<uint64_t, uint64_t> vmm_reserved_, vmm_maps_; // start -> bytes
    std::set<uint64_t> vmm_handles_;

    CudaGraphs graphs_{api_, ctx_, dev_};

    // Scratch for Batch, reused.
    std::vector<CUdeviceptr> batch_dst_, batch_src_;
    std::vector<size_t> batch_size_;
};

} // namespace kvmgpu::vgpu
