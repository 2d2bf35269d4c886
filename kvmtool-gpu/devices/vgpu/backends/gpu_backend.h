// What the vGPU device model needs from one guest device: the Driver API
// operations it forwards, in host terms (host pointers already translated
// and checked, handles already resolved, ordinals already picked). One
// instance per device of a VM (DeviceBackends holds a VM's, and does what
// needs two of them): the CUDA backend holds one CUDA context per instance,
// so VMs never share a device address space.
//
// Every method returns a vgpu_status (CUresult values). None throws, and
// none is called with guest-controlled values that the device model has not
// validated first.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/devices/vgpu/backends/array_shape.h"
#include "kvmtool-gpu/devices/vgpu/backends/param_layout.h"
#include "memmap/scatter_gather.h"

namespace kvmgpu::vgpu {

using Status = vgpu_status;
class BlasLibrary; // blas_library.h
class RandLibrary; // rand_library.h
class FftLibrary;  // fft_library.h

// How a backend comes by the libraries it offers. They are built on it
// (blas/, rand/, fft/), so it cannot name them: whoever makes the backend
// (backend_factory.h) gives it these, and each runs at the library's first use.
struct LibraryMakers {
    std::function<std::unique_ptr<BlasLibrary>()> blas;
    std::function<std::unique_ptr<RandLibrary>()> rand;
    std::function<std::unique_ptr<FftLibrary>()> fft;
};

// Opaque backend objects (CUmodule, CUfunction, CUstream, CUevent as
// integers). 0 is the default stream.
using BackendModule = uintptr_t;
using BackendFunction = uintptr_t;
using BackendStream = uintptr_t;
using BackendEvent = uintptr_t;
using BackendArray = uintptr_t; // CUarray

// One side of a 3-D copy, checked and translated by the device model: a
// host or device side starts at the copy's first byte (its x, y, z folded
// in) and spans what vgpu_copy_span says; an array side names where in the
// array the copy starts (inside its extent).
struct CopySide {
    uint32_t kind = 0;     // VGPU_COPY_*
    uint8_t* host = nullptr; // HOST: guest RAM, in the VMM
    uint64_t dptr = 0;     // DEVICE
    BackendArray array = 0; // ARRAY
    ArrayShape shape;      // ARRAY
    uint64_t x_bytes = 0, y = 0, z = 0; // ARRAY
    uint64_t pitch = 0, height = 0;     // HOST, DEVICE: bytes per row, rows per slice
};
struct Copy3D {
    CopySide src, dst;
    uint64_t width_bytes = 0, height = 0, depth = 0; // each >= 1
};

// A texture or surface object's resource and sampling, checked by the
// device model: resource.handle is the BackendArray for an ARRAY resource,
// the device address (inside one of the VM's allocations) otherwise.
struct TextureSpec {
    vgpu_tex_resource resource{};
    vgpu_tex_desc texture{};
};

struct Dim3 {
    uint32_t x = 1, y = 1, z = 1;
};

// How a kernel is launched beyond its shape: cooperatively (every block
// resident at once: cuLaunchCooperativeKernel) and with or without a
// thread-block cluster (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION and its
// scheduling policy, given only when the guest gave them). Made from a bool
// where a launch says only whether it is cooperative.
struct LaunchMode {
    bool cooperative = false;
    bool has_cluster = false;
    Dim3 cluster;
    uint32_t cluster_scheduling = 0;
    LaunchMode() = default;
    LaunchMode(bool coop) : cooperative(coop) {} // NOLINT(google-explicit-constructor): a bool says it all
};

// Whether `cluster` tiles `grid`: every dimension at least 1 and dividing
// the grid's (a GPU refuses any other with CUDA_ERROR_INVALID_CLUSTER_SIZE).
bool cluster_tiles(Dim3 grid, Dim3 cluster);
// Whether every dimension of `cluster` is at least 1 and it holds at most
// `max_blocks` blocks (the product taken in 64 bits: no value wraps it).
bool cluster_size_ok(Dim3 cluster, uint64_t max_blocks);

// A launch's shape as the cluster occupancy calls take it (a CUlaunchConfig
// with at most a cluster attribute). has_cluster false: the kernel's own
// compiled-in cluster size, if it has one.
struct ClusterShape {
    Dim3 grid, block;
    uint32_t shared_bytes = 0;
    bool has_cluster = false;
    Dim3 cluster;
};

// The launch limits, vgpu_launch_dims_ok (vgpu_abi.h): the device model's
// check, and GpuBackend::launch's and launch_packed's for every backend.
bool launch_dims_ok(Dim3 grid, Dim3 block);

// Scatter-gather copy strategies (vgpu_sg_strategy without AUTO).
// DeviceWalk is not a way to move host runs: it goes to memcpy_sg_walk().
enum class SgStrategy { PerChunk, Coalesce, Bounce, Batch, GatherKernel, DeviceWalk };

// A guest RAM region: guest-physical [gpa, gpa + bytes) is host memory from `host`.
struct RamRegion {
    uint64_t gpa;
    uint64_t bytes;
    const uint8_t* host;
};

// A scatter-gather transfer whose list the device itself reads and checks
// (VGPU_SG_DEVICE_WALK, see sg_walk.h). The device model checked only that
// the list lies in guest RAM (16-byte aligned), that count is within
// VGPU_MAX_SG_ENTRIES and that [dptr, dptr + total) is the VM's; the
// entries are guest-controlled and unread.
struct SgWalk {
    const void* list; // host view of the list (in registered guest RAM)
    uint64_t count;   // entries, >= 1
    uint64_t total;   // what the guest says they sum to, >= 1
    std::span<const RamRegion> ram; // where an entry may point
};
const char* to_string(SgStrategy s);
// "VGPU_ERROR_INVALID_VALUE" etc.; "VGPU_STATUS_<n>" for other CUresults.
const char* status_name(uint32_t s);

class ArrayBackend;
class GraphBackend;
class GpuBackend;
class VirtualMemoryBackend;

// The device calls a backend may offer: each row is (name, parameters) of
// a method that returns VGPU_ERROR_NOT_SUPPORTED unless a backend overrides
// it. GpuBackend declares them from the rows, and so does CudaBackend, which
// offers every one; the host backend overrides those it emulates by hand. A
// new call that needs the device adds its row here and its body to
// cuda_backend*.cpp. The device model checked every value first.
#define KVMGPU_BACKEND_DEVICE_CALLS(X) \
    /* cuDeviceGetP2PAttribute to `peer`, another of the VM's devices;      \
       NOT_SUPPORTED: DeviceBackends answers from peer_can_access. */       \
    X(peer_attribute, (GpuBackend& peer, int attribute, int* out))          \
    /* cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags: how many       \
       blocks of `block` threads (1..1024) with `dynamic_shared` bytes one  \
       multiprocessor of this device holds at once; flags 0 or 1. */        \
    X(occupancy, (BackendFunction f, uint32_t block, uint64_t dynamic_shared, uint32_t flags, int* out)) \
    /* cuOccupancyAvailableDynamicSMemPerBlock: the counts as the guest     \
       gave them (ints), judged by the driver. */                           \
    X(available_shared, (BackendFunction f, int blocks, int block, uint64_t* out)) \
    /* cuOccupancyMaxActiveClusters and cuOccupancyMaxPotentialClusterSize  \
       (the shape's cluster ignored) for the shape; every dimension within  \
       the launch limits, checked. */                                       \
    X(max_active_clusters, (BackendFunction f, const ClusterShape& shape, int* out)) \
    X(max_cluster_size, (BackendFunction f, const ClusterShape& shape, int* out)) \
    /* cuCtxGetLimit / cuCtxSetLimit on this device's context (CUlimit      \
       numbers below VGPU_LIMIT_COUNT_; the device model decides which may  \
       be set and counts what they cost). */                                \
    X(get_limit, (int limit, uint64_t* out))                                 \
    X(set_limit, (int limit, uint64_t value))                                \
    /* 2-D and 3-D copies between host memory, device memory and arrays     \
       (array_backend.h; every range and extent checked). */                \
    X(memcpy_3d, (const Copy3D& copy, BackendStream s, bool async))

// A backend that offers every device call declares them with this.
#define KVMGPU_BACKEND_OVERRIDE(name, params) Status name params override;

class GpuBackend {
public:
    GpuBackend();
    virtual ~GpuBackend();

    virtual uint32_t id() const = 0;            // VGPU_BACKEND_*
    virtual std::string describe() const = 0;   // one line, for result tables and logs
    virtual bool real_kernels() const = 0;      // false: CPU reference kernels only
    // What VGPU_SG_AUTO means on this backend.
    virtual SgStrategy default_sg_strategy() const = 0;
    // ... for a list of `entries` summing to `total_bytes` (0: not given):
    // the backend may pick by the entries' average length.
    virtual SgStrategy auto_sg_strategy(uint64_t entries, uint64_t total_bytes) const {
        (void)entries, (void)total_bytes;
        return default_sg_strategy();
    }

    // Makes the backend usable on the calling thread (CUDA: its context
    // current). The device calls it once on its executor thread and then
    // calls every other method on that thread only; backends are not
    // thread-safe.
    virtual void bind_thread() {}

    // Guest RAM, registered (pinned, device-mapped) at once. register_ns()
    // reports what registering has cost so far.
    virtual Status register_guest_ram(void* host, uint64_t bytes) = 0;
    virtual uint64_t register_ns() const = 0;
    // Guest RAM the backend may register lazily (lazy_registration.h): its
    // zero-copy window exists at once, its pages are registered as
    // prepare_guest_ram() and the copies reach them. The default registers
    // it at once.
    virtual Status add_guest_ram(void* host, uint64_t bytes) { return register_guest_ram(host, bytes); }
    // Makes [host, host + bytes) of added guest RAM usable by the device
    // (zero-copy, copy nodes, kernels); host nullptr: all of it.
    virtual Status prepare_guest_ram(const void* host, uint64_t bytes) {
        (void)host, (void)bytes;
        return VGPU_SUCCESS;
    }
    // As prepare_guest_ram, all of the range in one registration: a graph's
    // copy node names host memory the driver requires to be one.
    virtual Status prepare_guest_ram_in_one(const void* host, uint64_t bytes) { return prepare_guest_ram(host, bytes); }
    // Bytes of guest RAM registered so far (added RAM counts as it is).
    virtual uint64_t registered_bytes() const { return 0; }
    // Undoes register_guest_ram for the range starting at host (an alias of
    // guest pages the guest registered, cuMemHostUnregister).
    virtual Status unregister_guest_ram(void* host) = 0;
    // Device address of registered guest RAM at `host` (zero-copy), 0 if none.
    virtual uint64_t guest_ram_device_address(const void* host) const = 0;

    // Between this device and `peer`, another of the VM's devices (of this
    // backend's kind), as DeviceBackends asks. The defaults: no peer path
    // (the set stages copies through the VMM). memcpy_with_peer copies
    // between this backend's memory and peer's (to peer when to_peer), on
    // this backend's stream s.
    virtual Status peer_can_access(GpuBackend& peer, int* out) {
        (void)peer;
        *out = 0;
        return VGPU_SUCCESS;
    }
    virtual Status peer_set_access(GpuBackend& peer, bool enable) {
        (void)peer, (void)enable;
        return VGPU_ERROR_PEER_ACCESS_UNSUPPORTED;
    }
    virtual Status memcpy_with_peer(GpuBackend& peer, bool to_peer, uint64_t dst, uint64_t src, uint64_t bytes,
                                    BackendStream s, bool async) {
        (void)peer, (void)to_peer, (void)dst, (void)src, (void)bytes, (void)s, (void)async;
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    // This device's cuDeviceGetAttribute, cuDeviceGetName, cuDeviceTotalMem.
    virtual Status device_attribute(int attribute, int* out) = 0;
    virtual Status device_name(char* buf, size_t len) = 0;
    virtual Status device_total_mem(uint64_t* out) = 0;
    virtual Status ctx_synchronize() = 0;

    virtual Status mem_alloc(uint64_t bytes, uint64_t* dptr) = 0;
    virtual Status mem_free(uint64_t dptr) = 0;
    virtual Status mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes) = 0;

    // `async` false: the call returns when the copy is complete.
    virtual Status memcpy_htod(uint64_t dst, const void* src, uint64_t bytes, BackendStream s, bool async) = 0;
    virtual Status memcpy_dtoh(void* dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) = 0;
    virtual Status memcpy_dtod(uint64_t dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) = 0;
    // Scatter-gather: runs are in order; the device side is contiguous from
    // `dptr`. A strategy the backend lacks returns VGPU_ERROR_NOT_SUPPORTED.
    virtual Status memcpy_htod_sg(uint64_t dst, std::span<const memmap::HostRun> runs, SgStrategy how,
                                  BackendStream s, bool async) = 0;
    virtual Status memcpy_dtoh_sg(uint64_t src, std::span<const memmap::HostRun> runs, SgStrategy how,
                                  BackendStream s, bool async) = 0;
    // The device reads the list; an entry outside `ram`, an empty one, or
    // lengths not summing to total copy nothing. Synchronous (async false)
    // or host-side backends say so in the returned status; an asynchronous
    // walk's refusal is returned by the next *_synchronize. A backend
    // without a device walk returns VGPU_ERROR_NOT_SUPPORTED.
    virtual Status memcpy_sg_walk(bool htod, uint64_t dptr, const SgWalk& walk, BackendStream s, bool async) = 0;
    // count elements of element_bytes (1, 2 or 4) set to value, from dptr
    // (aligned to element_bytes): cuMemsetD8/D16/D32.
    virtual Status memset(uint64_t dptr, uint32_t value, uint32_t element_bytes, uint64_t count, BackendStream s,
                          bool async) = 0;
    // height rows of width elements (element_bytes 1, 2 or 4) set to value,
    // row r from dptr + r * pitch (pitch >= the row's bytes, aligned to the
    // element): cuMemsetD2D8/D16/D32.
    virtual Status memset_2d(uint64_t dptr, uint64_t pitch, uint32_t value, uint32_t element_bytes, uint64_t width,
                             uint64_t height, BackendStream s, bool async) = 0;
    // cuStreamWriteValue32/64 and cuStreamWaitValue32/64 (bytes 4 or 8,
    // dptr aligned to it, flags cuda.h's CU_STREAM_WRITE_VALUE_* /
    // CU_STREAM_WAIT_VALUE_*), in the stream's order.
    virtual Status stream_write_value(BackendStream s, uint64_t dptr, uint64_t value, uint32_t bytes, uint32_t flags,
                                      bool async) = 0;
    virtual Status stream_wait_value(BackendStream s, uint64_t dptr, uint64_t value, uint32_t bytes, uint32_t flags,
                                     bool async) = 0;

    // image is a private copy, and the byte after it is readable and 0 (a
    // PTX text image is NUL-terminated whatever the guest sent).
    virtual Status module_load(std::span<const uint8_t> image, BackendModule* out) = 0;
    virtual Status module_unload(BackendModule m) = 0;
    // *layout: the kernel's parameters as the module defines them (not as
    // any guest declares them); the device model checks launches against it.
    virtual Status module_get_function(BackendModule m, std::string_view name, BackendFunction* out,
                                       ParamLayout* layout) = 0;
    // Every kernel of the module (cuModuleEnumerateFunctions), and one
    // kernel's layout as module_get_function gives it (asked only for the
    // functions the VM gets a new handle for); NOT_SUPPORTED where a backend
    // cannot list them.
    virtual Status module_functions(BackendModule, std::vector<BackendFunction>*) { return VGPU_ERROR_NOT_SUPPORTED; }
    virtual Status function_layout(BackendFunction, ParamLayout*) { return VGPU_ERROR_NOT_SUPPORTED; }
    // cuFuncGetAttribute / cuFuncSetAttribute (CUfunction_attribute numbers).
    virtual Status function_attribute(BackendFunction f, int attribute, int* out) = 0;
    virtual Status set_function_attribute(BackendFunction f, int attribute, int value) = 0;
    // cuModuleGetGlobal: the device address and size of a __device__
    // variable; VGPU_ERROR_NOT_FOUND when the module has none of that name.
    // The device calls (KVMGPU_BACKEND_DEVICE_CALLS), not offered here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define KVMGPU_BACKEND_NOT_OFFERED(name, params) \
    virtual Status name params { return VGPU_ERROR_NOT_SUPPORTED; }
    KVMGPU_BACKEND_DEVICE_CALLS(KVMGPU_BACKEND_NOT_OFFERED)
#undef KVMGPU_BACKEND_NOT_OFFERED
#pragma GCC diagnostic pop

    virtual Status module_get_global(BackendModule m, std::string_view name, uint64_t* dptr, uint64_t* bytes) = 0;
    // params[i] points at sizes[i] bytes (Driver API kernelParams style),
    // and sizes match the function's ParamLayout exactly; `mode` as above.
    // Both launches refuse a shape beyond launch_dims_ok with
    // VGPU_ERROR_INVALID_VALUE here, for every backend, before the
    // backend's own (run_launch, run_launch_packed) sees it.
    Status launch(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                  std::span<void* const> params, std::span<const uint16_t> sizes, LaunchMode mode);
    // The same with the parameter buffer laid out as `layout` says (the
    // function's own; buffer.size() == layout.total_bytes()), as
    // cuLaunchKernel's `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER) takes it.
    Status launch_packed(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                         std::span<const uint8_t> buffer, const ParamLayout& layout, LaunchMode mode);



    virtual Status stream_create(uint32_t flags, BackendStream* out) = 0;
    virtual Status stream_synchronize(BackendStream s) = 0;
    virtual Status stream_destroy(BackendStream s) = 0;
    // VGPU_SUCCESS when done, VGPU_ERROR_NOT_READY while work is pending.
    virtual Status stream_query(BackendStream s) = 0;
    virtual Status stream_wait_event(BackendStream s, BackendEvent e) = 0;
    // cuStreamSetAttribute / cuStreamGetAttribute of a VGPU_STREAM_ATTR_*
    // (vgpu_abi.h) that the device model checked: a window over the VM's
    // device memory, the other attributes' values in their enum's range.
    virtual Status stream_set_attribute(BackendStream s, uint32_t attribute, const vgpu_stream_attr_value& v) = 0;
    virtual Status stream_get_attribute(BackendStream s, uint32_t attribute, vgpu_stream_attr_value* out) = 0;
    virtual Status event_create(uint32_t flags, BackendEvent* out) = 0;
    virtual Status event_record(BackendEvent e, BackendStream s) = 0;
    virtual Status event_synchronize(BackendEvent e) = 0;
    virtual Status event_elapsed_ms(BackendEvent start, BackendEvent end, float* ms) = 0;
    virtual Status event_destroy(BackendEvent e) = 0;
    virtual Status event_query(BackendEvent e) = 0;

    // This device's BLAS library (cuBLAS forwarded as calls), made at its
    // first use; nullptr when the backend was given none. The backend owns it.
    virtual BlasLibrary* blas();
    // ... and its cuRAND host API.
    virtual RandLibrary* rand();
    // ... and its cuFFT plans.
    virtual FftLibrary* fft();
    void offer_libraries(LibraryMakers makers) { makers_ = std::move(makers); }
    // CUDA graphs and stream capture (graph_backend.h); nullptr where the
    // backend has none (the device model refuses them, NOT_SUPPORTED).
    virtual GraphBackend* graphs() { return nullptr; }
    // Virtual memory management (virtual_memory_backend.h); nullptr where
    // the backend has none (the device model refuses it, NOT_SUPPORTED).
    virtual VirtualMemoryBackend* virtual_memory() { return nullptr; }
    // Arrays, texture and surface objects (array_backend.h); nullptr where
    // the backend has none (the device model refuses them, NOT_SUPPORTED).
    virtual ArrayBackend* arrays() { return nullptr; }

    // After a sticky error (e.g. a kernel's illegal address) the context is
    // unusable: re-create it and re-register guest RAM. Returns true when it
    // did so; every module/function/stream/event/allocation is then gone.
    virtual bool recover_from(Status s) = 0;

protected:
    // The libraries made so far go (their handles with them); a backend
    // calls this while the context they live in is still there.
    void drop_libraries();
    // The context went and took the libraries' handles with it.
    void libraries_lost_context();

    // The backend's launches, called only by launch() and launch_packed()
    // once the shape is within the limits. run_launch_packed's default
    // points into the buffer and calls run_launch(); the CUDA backend hands
    // the buffer to the driver as it is.
    virtual Status run_launch(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                              std::span<void* const> params, std::span<const uint16_t> sizes, LaunchMode mode) = 0;
    virtual Status run_launch_packed(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes,
                                     BackendStream s, std::span<const uint8_t> buffer, const ParamLayout& layout,
                                     LaunchMode mode);

private:
    LibraryMakers makers_;
    std::unique_ptr<BlasLibrary> blas_;
    std::unique_ptr<RandLibrary> rand_;
    std::unique_ptr<FftLibrary> fft_;
};

} // namespace kvmgpu::vgpu
