// A GpuBackend without a GPU, for machines that have none and for tests.
// "Device memory" is host memory behind fake device addresses that are not
// host pointers (non-canonical on x86-64, so a stray dereference faults at
// once): allocations in 0x0D00'0000'0000'0000.., zero-copy windows onto
// guest RAM in 0x0E00'0000'0000'0000.., each instance in a 16 TiB slice of
// its own (fake_address_space.h) where freed ranges are reused. Copies and memsets are real; streams are synchronous; events hold
// a host timestamp. Kernels are the CPU reference kernels of host_kernels.h:
// module_load accepts any non-empty image (it cannot run GPU code).
//
// Scatter-gather strategies, all plain CPU copies: PerChunk and Coalesce
// copy run by run; Bounce really goes through a bounce buffer; Batch builds
// the (dst, src, size) arrays first, then copies; GatherKernel is a CPU
// gather that reads each run through its zero-copy device address (so it
// exercises that mapping) and is NOT_SUPPORTED for RAM that is not
// registered.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/fake_address_space.h"
#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/guest_ram_map.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_arrays.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_device_memory.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_graphs.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_kernels.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_virtual_memory.h"

namespace kvmgpu::vgpu {

struct HostBackendOptions {
    uint64_t total_bytes = 16ull << 30; // what the "device" claims to have
    uint64_t bounce_bytes = 1ull << 20; // Bounce strategy buffer
};

class HostBackend final : public GpuBackend, public DeviceAddressSpace {
public:
    explicit HostBackend(HostBackendOptions opts = {});
    ~HostBackend() override;

    // Nominal figures of the "device" (an H100's where a GPU's are needed).
    static constexpr int kDefaultDynamicShared = 48 << 10; // a launch's dynamic shared memory without opting in
    static constexpr int kMaxDynamicShared = 227 << 10;    // the most a kernel may opt in to
    static constexpr int kThreadsPerMultiprocessor = 2048;
    static constexpr int kBlocksPerMultiprocessor = 32;
    static constexpr int kSharedPerMultiprocessor = 228 << 10;
    static constexpr int kMaxClusterBlocks = 8; // the portable cluster size
    static constexpr int kMaxAccessPolicyWindow = 134213632; // an H100's accessPolicyMaxWindowSize
    // A cluster this "device" runs: tiling the grid, at most kMaxClusterBlocks.
    static bool cluster_fits(Dim3 grid, Dim3 cluster) {
        return cluster_tiles(grid, cluster) && cluster_size_ok(cluster, kMaxClusterBlocks);
    }

    uint32_t id() const override { return VGPU_BACKEND_HOST; }
    std::string describe() const override;
    bool real_kernels() const override { return false; }
    SgStrategy default_sg_strategy() const override { return SgStrategy::Coalesce; }

    Status register_guest_ram(void* host, uint64_t bytes) override;
    Status unregister_guest_ram(void* host) override;
    uint64_t register_ns() const override { return register_ns_; }
    uint64_t registered_bytes() const override {
        uint64_t n = 0;
        for (const auto& r : ram_.ranges()) n += r.bytes;
        return n;
    }
    uint64_t guest_ram_device_address(const void* host) const override { return ram_.device_address(host); }

    Status device_attribute(int attribute, int* out) override;
    Status device_name(char* buf, size_t len) override;
    Status device_total_mem(uint64_t* out) override;
    Status ctx_synchronize() override { return VGPU_SUCCESS; }

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
    // The device walk done by the CPU with the GPU's rules (sg_walk.h), and
    // refused at once: this backend works synchronously.
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
    // host_backend_limits.cpp: occupancy by the nominal figures above (the
    // reference kernels use no registers or static shared memory); limits
    // kept as numbers, starting at a GPU's defaults.
    Status occupancy(BackendFunction f, uint32_t block, uint64_t dynamic_shared, uint32_t flags, int* out) override;
    // Clusters of up to kMaxClusterBlocks that tile the grid; as many at
    // once as whole clusters fit the multiprocessors' blocks.
    Status max_active_clusters(BackendFunction f, const ClusterShape& shape, int* out) override;
    Status max_cluster_size(BackendFunction f, const ClusterShape& shape, int* out) override;
    Status get_limit(int limit, uint64_t* out) override;
    Status set_limit(int limit, uint64_t value) override;
    // host_backend_memcpy_3d.cpp: copies between any two sides (host,
    // device, an array of host_arrays.h), row by row.
    Status memcpy_3d(const Copy3D& copy, BackendStream s, bool async) override;
    // Arrays, texture and surface objects (host_arrays.h).
    ArrayBackend* arrays() override { return &arrays_; }
    uint64_t live_arrays() const { return arrays_.live(); }
    uint64_t live_events() const { return events_.size(); } // for tests: retired ones included

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

    // Peer access between host devices (a VM's DeviceBackends, all in host RAM):
    // possible between any two, and once enabled a CPU kernel on this device
    // reaches the peer's allocations, as a GPU kernel reaches a peer's
    // memory over the bus. Copies between devices stay the set's staged
    // ones. Peers must outlive this backend's kernels (a set owns both).
    Status peer_can_access(GpuBackend& peer, int* out) override;
    Status peer_set_access(GpuBackend& peer, bool enable) override;

    // A CPU kernel's illegal address is treated as sticky, like a GPU's:
    // every allocation, module, stream and event is dropped.
    bool recover_from(Status s) override;
    // Graphs recorded and replayed with this backend's own operations (host_graphs.h).
    GraphBackend* graphs() override { return &graphs_; }

    // Virtual memory management over host memory (host_virtual_memory.h).
    VirtualMemoryBackend* virtual_memory() override { return &vmm_; }

    // DeviceAddressSpace, for the CPU kernels (and the copies): this
    // device's memory, then that of the peers it has access to.
    uint8_t* translate(uint64_t dptr, uint64_t bytes) const override;

    uint64_t live_allocations() const { return allocs_.size(); }

protected:
    // The function's parameter sizes and dynamic shared memory checked
    // (the launch limits are GpuBackend::launch's), then the reference
    // kernel runs at once, or is recorded on a capturing stream.
    Status run_launch(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                      std::span<void* const> params, std::span<const uint16_t> sizes, LaunchMode mode) override;

private:
    struct Allocation {
        uint8_t* host;
        uint64_t bytes;
    };
    struct Event {
        uint32_t flags;
        std::optional<uint64_t> ns; // set by record
    };
    uint8_t* translate_own(uint64_t dptr, uint64_t bytes) const;
    bool stream_ok(BackendStream s) const { return s == 0 || streams_.count(s); }
    Status sg_copy(uint64_t dptr, std::span<const memmap::HostRun> runs, SgStrategy how, BackendStream s, bool htod);
    void drop_all();
    // Where a copy side's box starts in host memory, with its row and slice
    // pitch; nullptr for memory this backend does not have.
    uint8_t* copy_view(const CopySide& side, const Copy3D& copy, uint64_t* pitch, uint64_t* slice);
    uint64_t next_object() { return memory_.next_object(); }

    HostBackendOptions opts_;
    FakeSliceLease slice_;
    FakeAddressRange alloc_addresses_, ram_addresses_; // this instance's slices
    std::map<uint64_t, Allocation> allocs_; // by fake device address
    // The budget, address range and object numbers its parts share with it.
    HostDeviceMemory memory_{opts_.total_bytes, alloc_addresses_};
    GuestRamMap ram_;
    uint64_t register_ns_ = 0;
    // Each module's reference kernels: those whose names its image holds.
    std::map<BackendModule, std::vector<int>> modules_;
    std::set<BackendStream> streams_;
    // host_backend_stream_attributes.cpp: what each stream was set to (by
    // stream, attribute); an attribute never set reads as its default.
    std::map<std::pair<BackendStream, uint32_t>, vgpu_stream_attr_value> stream_attributes_;
    std::map<BackendEvent, Event> events_;
    // Per reference kernel: the dynamic shared memory a launch may ask for
    // (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; default 48 KiB).
    std::map<BackendFunction, int> max_dynamic_shared_;
    int max_dynamic_shared(BackendFunction f) const {
        const auto it = max_dynamic_shared_.find(f);
        return it == max_dynamic_shared_.end() ? kDefaultDynamicShared : it->second;
    }
    std::array<uint64_t, VGPU_LIMIT_COUNT_> limits_ = start_limits();
    static std::array<uint64_t, VGPU_LIMIT_COUNT_> start_limits();
    std::vector<uint8_t> bounce_;
    bool allocation_overlaps(uint64_t va, uint64_t bytes) const;
    HostArrays arrays_{memory_};
    HostVirtualMemory vmm_{memory_};

    std::set<const HostBackend*> peers_; // peer access enabled to these
    HostGraphs graphs_{*this};
};

} // namespace kvmgpu::vgpu
