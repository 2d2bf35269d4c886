#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/module_image.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "kvmtool-gpu/devices/vgpu/range.h"
#include "kvmtool-gpu/util/clock.h"

namespace kvmgpu::vgpu {

namespace {
// The two fake windows (fake_address_space.h): allocations, and guest RAM.
constexpr uint64_t kAllocBase = 0x0D00'0000'0000'0000ull;
constexpr uint64_t kRamBase = 0x0E00'0000'0000'0000ull;

constexpr uint32_t kEventDisableTiming = 0x2; // CU_EVENT_DISABLE_TIMING
constexpr int kAttributeMax = 148;             // CU_DEVICE_ATTRIBUTE_MAX in CUDA 13.0's cuda.h
} // namespace

HostBackend::HostBackend(HostBackendOptions opts)
    : opts_(opts), alloc_addresses_(slice_.slice_of(kAllocBase)), ram_addresses_(slice_.slice_of(kRamBase)), bounce_(std::max<uint64_t>(opts.bounce_bytes, 4096)) {
    // A fixed virtual-memory reservation must miss allocations and guest RAM's windows.
    memory_.in_use = [this](uint64_t va, uint64_t bytes) { return allocation_overlaps(va, bytes) || ram_.host_of(va, 1); };
}

HostBackend::~HostBackend() {
    drop_libraries(); // they read this device's memory
    drop_all();
}

std::string HostBackend::describe() const {
    return "host backend: device memory in host RAM, CPU reference kernels (vector_add, matmul, empty_kernel, "
           "the runtime-API samples' kernels); "
           "not a GPU";
}

Status HostBackend::register_guest_ram(void* host, uint64_t bytes) {
    const auto t0 = now_ns();
    if (!host || bytes == 0) return VGPU_ERROR_INVALID_VALUE;
    const uint64_t dev = ram_addresses_.reserve(bytes);
    if (dev == 0) return VGPU_ERROR_OUT_OF_MEMORY;
    ram_.add(static_cast<uint8_t*>(host), bytes, dev);
    register_ns_ += now_ns() - t0;
    return VGPU_SUCCESS;
}

Status HostBackend::unregister_guest_ram(void* host) {
    const uint64_t dev = ram_.device_address(host);
    if (!ram_.remove(static_cast<uint8_t*>(host))) return VGPU_ERROR_HOST_MEMORY_NOT_REGISTERED;
    ram_addresses_.release(dev);
    return VGPU_SUCCESS;
}

uint8_t* HostBackend::translate(uint64_t dptr, uint64_t bytes) const {
    if (uint8_t* p = translate_own(dptr, bytes)) return p;
    for (const HostBackend* peer : peers_)
        if (uint8_t* p = peer->translate_own(dptr, bytes)) return p;
    return nullptr;
}

uint8_t* HostBackend::translate_own(uint64_t dptr, uint64_t bytes) const {
    auto it = allocs_.upper_bound(dptr);
    if (it != allocs_.begin()) {
        --it;
        if (range_inside(dptr, bytes, it->first, it->second.bytes)) return it->second.host + (dptr - it->first);
    }
    if (uint8_t* p = vmm_.translate(dptr, bytes)) return p;
    return ram_.host_of(dptr, bytes);
}

Status HostBackend::peer_can_access(GpuBackend& peer, int* out) {
    *out = dynamic_cast<HostBackend*>(&peer) != nullptr && &peer != this;
    return VGPU_SUCCESS;
}

Status HostBackend::peer_set_access(GpuBackend& peer, bool enable) {
    const auto* other = dynamic_cast<const HostBackend*>(&peer);
    if (!other || other == this) return VGPU_ERROR_PEER_ACCESS_UNSUPPORTED;
    if (enable) peers_.insert(other);
    else peers_.erase(other);
    return VGPU_SUCCESS;
}

Status HostBackend::device_attribute(int attribute, int* out) {
    // CUdevice_attribute numbers; the host backend answers the launch limits
    // a guest needs and reports compute capability 0.0 (it is not a GPU).
    switch (attribute) {
    case 1: *out = 1024; break;       // MAX_THREADS_PER_BLOCK
    case 2: case 3: *out = 1024; break; // MAX_BLOCK_DIM_X, _Y
    case 4: *out = 64; break;         // MAX_BLOCK_DIM_Z
    case 5: *out = 0x7FFFFFFF; break; // MAX_GRID_DIM_X
    case 6: case 7: *out = 65535; break; // MAX_GRID_DIM_Y, _Z
    case 8: *out = kDefaultDynamicShared; break; // MAX_SHARED_MEMORY_PER_BLOCK (without opting in to more)
    case 97: *out = kMaxDynamicShared; break;    // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    case 9: *out = 64 << 10; break;   // TOTAL_CONSTANT_MEMORY
    case 10: *out = 32; break;        // WARP_SIZE
    // Nominal figures of a device that is not one: clock rates (kHz), bus
    // width (bits), L2 size (bytes), threads per "multiprocessor".
    case 13: case 36: *out = 1000000; break; // CLOCK_RATE, MEMORY_CLOCK_RATE
    case 37: *out = 64; break;        // GLOBAL_MEMORY_BUS_WIDTH
    case 38: *out = 1 << 20; break;   // L2_CACHE_SIZE
    case 39: *out = 2048; break;      // MAX_THREADS_PER_MULTIPROCESSOR
    case 16: *out = static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); break; // MULTIPROCESSOR_COUNT
    case 19: *out = 1; break;         // CAN_MAP_HOST_MEMORY
    case 41: *out = 1; break;         // UNIFIED_ADDRESSING
    case 95: *out = 1; break;         // COOPERATIVE_LAUNCH (blocks run in turn: any grid fits)
    case 102: *out = 1; break;        // VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED (host_virtual_memory.h)
    case 109: *out = kMaxAccessPolicyWindow; break; // MAX_ACCESS_POLICY_WINDOW_SIZE (a window is kept, a hint)
    case 126: *out = 2; break;        // MEM_SYNC_DOMAIN_COUNT: the two CUlaunchMemSyncDomain names
    case 75: case 76: *out = 0; break; // COMPUTE_CAPABILITY_MAJOR, _MINOR
    default:
        // Every other attribute CUDA 13 names (below CU_DEVICE_ATTRIBUTE_MAX)
        // is a feature this backend lacks, a count it has none of, or a mode
        // whose default is 0 (COMPUTE_MODE_DEFAULT): 0, as a program that
        // only asks expects an answer. Numbers outside that range: refused.
        if (attribute < 1 || attribute >= kAttributeMax) return VGPU_ERROR_INVALID_VALUE;
        *out = 0;
    }
    return VGPU_SUCCESS;
}

Status HostBackend::device_name(char* buf, size_t len) {
    if (len == 0) return VGPU_ERROR_INVALID_VALUE;
    std::snprintf(buf, len, "kvmtool-gpu host backend (CPU reference kernels, not a GPU)");
    return VGPU_SUCCESS;
}

Status HostBackend::device_total_mem(uint64_t* out) {
    *out = opts_.total_bytes;
    return VGPU_SUCCESS;
}

Status HostBackend::mem_alloc(uint64_t bytes, uint64_t* dptr) {
    if (bytes == 0) return VGPU_ERROR_INVALID_VALUE;
    if (!memory_.take(bytes)) return VGPU_ERROR_OUT_OF_MEMORY;
    // calloc: large blocks come from fresh zero pages, touched lazily.
    auto* host = static_cast<uint8_t*>(std::calloc(1, bytes));
    const uint64_t dev = host ? alloc_addresses_.reserve(bytes) : 0;
    if (dev == 0) {
        std::free(host);
        memory_.give(bytes);
        return VGPU_ERROR_OUT_OF_MEMORY;
    }
    allocs_.emplace(dev, Allocation{host, bytes});
    *dptr = dev;
    return VGPU_SUCCESS;
}

bool HostBackend::allocation_overlaps(uint64_t va, uint64_t bytes) const {
    for (const auto& [base, a] : allocs_)
        if (ranges_overlap(va, bytes, base, a.bytes)) return true; // callers' ranges do not wrap
    return false;
}

Status HostBackend::mem_free(uint64_t dptr) {
    auto it = allocs_.find(dptr);
    if (it == allocs_.end()) return VGPU_ERROR_INVALID_VALUE;
    std::free(it->second.host);
    memory_.give(it->second.bytes);
    alloc_addresses_.release(it->first);
    allocs_.erase(it);
    return VGPU_SUCCESS;
}

Status HostBackend::mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes) {
    *free_bytes = memory_.free_bytes();
    *total_bytes = opts_.total_bytes;
    return VGPU_SUCCESS;
}

// Copies finish before returning; `async` matters only on a capturing stream.
Status HostBackend::memcpy_htod(uint64_t dst, const void* src, uint64_t bytes, BackendStream s, bool async) {
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    if (graphs_.capturing(s))
        return graphs_.record(s, GraphNodeSpec::Kind::Memcpy,
                              [this, dst, src, bytes] { return memcpy_htod(dst, src, bytes, 0, false); }, async);
    uint8_t* d = translate(dst, bytes);
    if (!d) return VGPU_ERROR_INVALID_VALUE;
    std::memmove(d, src, bytes); // src may be guest RAM that is also a window
    return VGPU_SUCCESS;
}

Status HostBackend::memcpy_dtoh(void* dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) {
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    if (graphs_.capturing(s))
        return graphs_.record(s, GraphNodeSpec::Kind::Memcpy,
                              [this, dst, src, bytes] { return memcpy_dtoh(dst, src, bytes, 0, false); }, async);
    const uint8_t* p = translate(src, bytes);
    if (!p) return VGPU_ERROR_INVALID_VALUE;
    std::memmove(dst, p, bytes);
    return VGPU_SUCCESS;
}

Status HostBackend::memcpy_dtod(uint64_t dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) {
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    if (graphs_.capturing(s))
        return graphs_.record(s, GraphNodeSpec::Kind::Memcpy,
                              [this, dst, src, bytes] { return memcpy_dtod(dst, src, bytes, 0, false); }, async);
    uint8_t* d = translate(dst, bytes);
    const uint8_t* p = translate(src, bytes);
    if (!d || !p) return VGPU_ERROR_INVALID_VALUE;
    std::memmove(d, p, bytes);
    return VGPU_SUCCESS;
}

Status HostBackend::memset(uint64_t dptr, uint32_t value, uint32_t element_bytes, uint64_t count, BackendStream s,
                           bool async) {
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    if (graphs_.capturing(s))
        return graphs_.record(s, GraphNodeSpec::Kind::Memset,
                              [=, this] { return memset(dptr, value, element_bytes, count, 0, false); }, async);
    if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4) return VGPU_ERROR_INVALID_VALUE;
    uint64_t bytes;
    if (dptr % element_bytes || __builtin_mul_overflow(count, element_bytes, &bytes)) return VGPU_ERROR_INVALID_VALUE;
    uint8_t* d = translate(dptr, bytes);
    if (!d) return VGPU_ERROR_INVALID_VALUE;
    for (uint64_t i = 0; i < count; ++i) std::memcpy(d + element_bytes * i, &value, element_bytes); // little endian
    return VGPU_SUCCESS;
}

Status HostBackend::memset_2d(uint64_t dptr, uint64_t pitch, uint32_t value, uint32_t element_bytes, uint64_t width,
                              uint64_t height, BackendStream s, bool async) {
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    if (graphs_.capturing(s))
        return graphs_.record(s, GraphNodeSpec::Kind::Memset, [=, this] {
            return memset_2d(dptr, pitch, value, element_bytes, width, height, 0, false);
        }, async);
    if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4) return VGPU_ERROR_INVALID_VALUE;
    uint64_t row = 0, span = 0;
    if (dptr % element_bytes || pitch % element_bytes || __builtin_mul_overflow(width, element_bytes, &row) ||
        (height > 0 && pitch < row))
        return VGPU_ERROR_INVALID_VALUE;
    if (row == 0 || height == 0) return VGPU_SUCCESS;
    if (__builtin_mul_overflow(height - 1, pitch, &span) || __builtin_add_overflow(span, row, &span))
        return VGPU_ERROR_INVALID_VALUE;
    uint8_t* d = translate(dptr, span); // the whole span in one allocation
    if (!d) return VGPU_ERROR_INVALID_VALUE;
    for (uint64_t r = 0; r < height; ++r)
        for (uint64_t i = 0; i < width; ++i) std::memcpy(d + r * pitch + element_bytes * i, &value, element_bytes);
    return VGPU_SUCCESS;
}

// Streams run their work at once here, so a write lands now and a wait is
// met now or never: a wait whose condition does not hold yet cannot be held
// back (NOT_SUPPORTED), where a GPU would hold the stream until it does.
Status HostBackend::stream_write_value(BackendStream s, uint64_t dptr, uint64_t value, uint32_t bytes, uint32_t,
                                       bool) {
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    if (graphs_.capturing(s)) return VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if ((bytes != 4 && bytes != 8) || dptr % bytes) return VGPU_ERROR_INVALID_VALUE;
    uint8_t* d = translate(dptr, bytes);
    if (!d) return VGPU_ERROR_INVALID_VALUE;
    std::memcpy(d, &value, bytes); // little endian: a 32-bit write takes the low half
    return VGPU_SUCCESS;
}

Status HostBackend::stream_wait_value(BackendStream s, uint64_t dptr, uint64_t value, uint32_t bytes, uint32_t flags,
                                      bool) {
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    if (graphs_.capturing(s)) return VGPU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if ((bytes != 4 && bytes != 8) || dptr % bytes) return VGPU_ERROR_INVALID_VALUE;
    const uint8_t* d = translate(dptr, bytes);
    if (!d) return VGPU_ERROR_INVALID_VALUE;
    uint64_t now = 0;
    std::memcpy(&now, d, bytes);
    const uint64_t want = bytes == 4 ? (value & 0xffffffffu) : value;
    bool met = false;
    switch (flags & 0x3) { // CU_STREAM_WAIT_VALUE_GEQ, EQ, AND, NOR (cuda.h)
    case 0: met = bytes == 4 ? static_cast<int32_t>(static_cast<uint32_t>(now - want)) >= 0
                             : static_cast<int64_t>(now - want) >= 0; // GEQ compares cyclically, as the GPU
        break;
    case 1: met = now == want; break;
    case 2: met = (now & want) != 0; break;
    case 3: met = (~(now | want) & (bytes == 4 ? 0xffffffffull : ~0ull)) != 0; break;
    }
    return met ? VGPU_SUCCESS : VGPU_ERROR_NOT_SUPPORTED;
}

// The image is checked as the driver would refuse it at once; its code is
// never run (the reference kernels are found by name).
Status HostBackend::module_load(std::span<const uint8_t> image, BackendModule* out) {
    if (module_image_kind(image) == ModuleImageKind::Invalid) return VGPU_ERROR_INVALID_IMAGE;
    *out = next_object();
    modules_[*out] = kernels_named_in(image);
    return VGPU_SUCCESS;
}

Status HostBackend::module_unload(BackendModule m) {
    return modules_.erase(m) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE;
}

Status HostBackend::module_get_function(BackendModule m, std::string_view name, BackendFunction* out,
                                        ParamLayout* layout) {
    if (!modules_.count(m)) return VGPU_ERROR_INVALID_HANDLE;
    const int i = find_cpu_kernel(name);
    if (i < 0) return VGPU_ERROR_NOT_FOUND;
    *out = static_cast<BackendFunction>(i) + 1;
    *layout = cpu_kernel_layout(cpu_kernels()[i]);
    return VGPU_SUCCESS;
}

// The reference kernels the module's image names (a compressed image names
// none that can be read, and so lists none).
Status HostBackend::module_functions(BackendModule m, std::vector<BackendFunction>* out) {
    const auto it = modules_.find(m);
    if (it == modules_.end()) return VGPU_ERROR_INVALID_HANDLE;
    out->clear();
    for (const int i : it->second) out->push_back(static_cast<BackendFunction>(i) + 1);
    return VGPU_SUCCESS;
}

Status HostBackend::function_layout(BackendFunction f, ParamLayout* layout) {
    if (f == 0 || f > cpu_kernels().size()) return VGPU_ERROR_INVALID_HANDLE;
    *layout = cpu_kernel_layout(cpu_kernels()[f - 1]);
    return VGPU_SUCCESS;
}

// CUfunction_attribute numbers. The reference kernels use no registers,
// static shared, constant or local memory; they report what a GPU kernel
// that used none would.
Status HostBackend::function_attribute(BackendFunction f, int attribute, int* out) {
    if (f == 0 || f > cpu_kernels().size()) return VGPU_ERROR_INVALID_HANDLE;
    const auto opted = max_dynamic_shared_.find(f);
    switch (attribute) {
    case 0: *out = 1024; break;                          // MAX_THREADS_PER_BLOCK
    case 1: case 2: case 3: case 4: *out = 0; break;     // SHARED/CONST/LOCAL_SIZE_BYTES, NUM_REGS
    case 5: case 6: *out = 90; break;                    // PTX_VERSION, BINARY_VERSION (as sm_90 code)
    case 7: *out = 0; break;                             // CACHE_MODE_CA
    case 8: *out = opted == max_dynamic_shared_.end() ? kDefaultDynamicShared : opted->second; break;
    case 9: *out = -1; break;                            // PREFERRED_SHARED_MEMORY_CARVEOUT: no preference
    default: return VGPU_ERROR_INVALID_VALUE;
    }
    return VGPU_SUCCESS;
}

Status HostBackend::set_function_attribute(BackendFunction f, int attribute, int value) {
    if (f == 0 || f > cpu_kernels().size()) return VGPU_ERROR_INVALID_HANDLE;
    if (attribute == 8) { // MAX_DYNAMIC_SHARED_SIZE_BYTES
        if (value < 0 || value > kMaxDynamicShared) return VGPU_ERROR_INVALID_VALUE;
        max_dynamic_shared_[f] = value;
        return VGPU_SUCCESS;
    }
    if (attribute == 9) return value >= -1 && value <= 100 ? VGPU_SUCCESS : VGPU_ERROR_INVALID_VALUE; // carveout, %
    return VGPU_ERROR_INVALID_VALUE;
}

// The reference kernels are C++: there is no __device__ variable to find.
Status HostBackend::module_get_global(BackendModule m, std::string_view, uint64_t*, uint64_t*) {
    return modules_.count(m) ? VGPU_ERROR_NOT_FOUND : VGPU_ERROR_INVALID_HANDLE;
}

// A cooperative or clustered launch runs as any other: the reference
// kernels never synchronise across blocks or share a cluster's memory, and
// every block runs in turn anyway. A cluster must tile the grid and hold
// at most the 8 blocks every GPU with clusters offers, as CUDA says.
Status HostBackend::run_launch(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                               std::span<void* const> params, std::span<const uint16_t> sizes, LaunchMode mode) {
    const auto table = cpu_kernels();
    if (f == 0 || f > table.size()) return VGPU_ERROR_INVALID_HANDLE;
    if (mode.has_cluster && !cluster_fits(grid, mode.cluster)) return VGPU_ERROR_INVALID_CLUSTER_SIZE;
    if (!stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    const CpuKernel& k = table[f - 1];
    if (params.size() != k.param_sizes.size() || !std::equal(sizes.begin(), sizes.end(), k.param_sizes.begin(), k.param_sizes.end()))
        return VGPU_ERROR_INVALID_VALUE;
    const auto opted = max_dynamic_shared_.find(f);
    const uint64_t shared_limit = opted == max_dynamic_shared_.end() ? kDefaultDynamicShared : opted->second;
    if (shared_bytes > shared_limit) return VGPU_ERROR_INVALID_VALUE; // as CUDA does
    if (graphs_.capturing(s)) {
        // The parameters, copied: the caller's pointers do not outlive the call.
        auto kept = std::make_shared<std::vector<std::vector<uint8_t>>>();
        for (size_t i = 0; i < params.size(); ++i) {
            const auto* p = static_cast<const uint8_t*>(params[i]);
            kept->emplace_back(p, p + sizes[i]);
        }
        std::vector<uint16_t> kept_sizes(sizes.begin(), sizes.end());
        return graphs_.record(s, GraphNodeSpec::Kind::Kernel, [=, this] {
            std::vector<void*> ptrs;
            for (auto& v : *kept) ptrs.push_back(v.data());
            return launch(f, grid, block, shared_bytes, 0, ptrs, kept_sizes, false);
        });
    }
    return k.fn(*this, grid, block, params);
}

Status HostBackend::stream_create(uint32_t, BackendStream* out) {
    *out = next_object();
    streams_.insert(*out);
    return VGPU_SUCCESS;
}

Status HostBackend::stream_synchronize(BackendStream s) {
    return stream_ok(s) ? graphs_.refuse_sync(s) : VGPU_ERROR_INVALID_HANDLE;
}

Status HostBackend::stream_destroy(BackendStream s) {
    graphs_.forget_stream(s);
    std::erase_if(stream_attributes_, [s](const auto& e) { return e.first.first == s; });
    return streams_.erase(s) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE;
}

Status HostBackend::event_create(uint32_t flags, BackendEvent* out) {
    *out = next_object();
    events_.emplace(*out, Event{flags, std::nullopt});
    return VGPU_SUCCESS;
}

Status HostBackend::event_record(BackendEvent e, BackendStream s) {
    auto it = events_.find(e);
    if (it == events_.end() || !stream_ok(s)) return VGPU_ERROR_INVALID_HANDLE;
    graphs_.event_recorded(e, s);
    if (graphs_.capturing(s)) return VGPU_SUCCESS; // an ordering point in the capture, no time
    it->second.ns = now_ns(); // all work before it is already done
    return VGPU_SUCCESS;
}

Status HostBackend::event_synchronize(BackendEvent e) { return events_.count(e) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE; }

// The host backend finishes all work in the call that queued it: a stream
// or an event is always done, and a wait has nothing to wait for.
Status HostBackend::stream_query(BackendStream s) {
    return stream_ok(s) ? graphs_.refuse_sync(s) : VGPU_ERROR_INVALID_HANDLE;
}

Status HostBackend::stream_wait_event(BackendStream s, BackendEvent e) {
    if (!stream_ok(s) || !events_.count(e)) return VGPU_ERROR_INVALID_HANDLE;
    graphs_.stream_waits(s, e);
    return VGPU_SUCCESS;
}

Status HostBackend::event_query(BackendEvent e) { return events_.count(e) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE; }

Status HostBackend::event_elapsed_ms(BackendEvent start, BackendEvent end, float* ms) {
    auto a = events_.find(start), b = events_.find(end);
    if (a == events_.end() || b == events_.end()) return VGPU_ERROR_INVALID_HANDLE;
    // As cuEventElapsedTime: both recorded, both timing.
    if (!a->second.ns || !b->second.ns || ((a->second.flags | b->second.flags) & kEventDisableTiming))
        return VGPU_ERROR_INVALID_HANDLE;
    *ms = static_cast<float>((static_cast<double>(*b->second.ns) - static_cast<double>(*a->second.ns)) / 1e6);
    return VGPU_SUCCESS;
}

Status HostBackend::event_destroy(BackendEvent e) { return events_.erase(e) ? VGPU_SUCCESS : VGPU_ERROR_INVALID_HANDLE; }

bool HostBackend::recover_from(Status s) {
    if (s != VGPU_ERROR_ILLEGAL_ADDRESS && s != VGPU_ERROR_LAUNCH_FAILED) return false;
    drop_all(); // guest RAM windows stay: as after the CUDA backend re-registers them
    return true;
}

void HostBackend::drop_all() {
    libraries_lost_context();
    limits_ = start_limits(); // a recovered context starts afresh, as a new CUDA context does
    for (auto& [dev, a] : allocs_) {
        std::free(a.host);
        alloc_addresses_.release(dev);
    }
    allocs_.clear();
    vmm_.clear();
    arrays_.clear();
    memory_.give_all();
    modules_.clear();
    streams_.clear();
    stream_attributes_.clear();
    events_.clear();
    peers_.clear();
    graphs_.clear();
}

} // namespace kvmgpu::vgpu
