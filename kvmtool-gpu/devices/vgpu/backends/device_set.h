// Several devices behind one backend interface: one backend per guest
// device (each with its own context, on its own or a shared GPU), the
// device model picking one with select_device(). Made for `--gpus LIST`.
//
// Every call goes to the selected device, except the device queries (by
// ordinal) and guest RAM registration (every device gets guest RAM, so each
// can DMA from it). A copy between two
// devices goes as the devices allow: the backend's own peer copy when both
// are one backend's kind and it has one (CUDA: cuMemcpyPeerAsync, over the
// bus where peer access allows, staged by the driver where not), else staged
// through the VMM's memory (device to host, then host to device); the log
// says which on the first copy between each pair of devices.
#pragma once

#include <memory>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

class DeviceSet final : public GpuBackend {
public:
    // Throws std::invalid_argument for an empty list, a null backend, or
    // backends of different kinds.
    explicit DeviceSet(std::vector<std::unique_ptr<GpuBackend>> devices);

    uint32_t id() const override { return devices_.front()->id(); }
    std::string describe() const override;
    bool real_kernels() const override { return devices_.front()->real_kernels(); }
    SgStrategy default_sg_strategy() const override { return devices_.front()->default_sg_strategy(); }
    SgStrategy auto_sg_strategy(uint64_t entries, uint64_t total_bytes) const override {
        return cur().auto_sg_strategy(entries, total_bytes);
    }
    void bind_thread() override;

    Status register_guest_ram(void* host, uint64_t bytes) override;
    uint64_t register_ns() const override;
    Status unregister_guest_ram(void* host) override;
    uint64_t guest_ram_device_address(const void* host) const override { return cur().guest_ram_device_address(host); }

    Status device_count(int* out) override;
    Status select_device(int ordinal) override;
    BlasLibrary* blas() override { return cur().blas(); }
    RandLibrary* rand() override { return cur().rand(); }
    FftLibrary* fft() override { return cur().fft(); }
    Status device_attribute(int attribute, int ordinal, int* out) override;
    Status device_name(int ordinal, char* buf, size_t len) override;
    Status device_total_mem(int ordinal, uint64_t* out) override;
    Status ctx_synchronize() override { return cur().ctx_synchronize(); }

    Status mem_alloc(uint64_t bytes, uint64_t* dptr) override { return cur().mem_alloc(bytes, dptr); }
    Status mem_free(uint64_t dptr) override { return cur().mem_free(dptr); }
    Status vmm_granularity(uint64_t* out) override { return cur().vmm_granularity(out); }
    Status vmm_reserve(uint64_t bytes, uint64_t align, uint64_t fixed, uint64_t* va) override {
        return cur().vmm_reserve(bytes, align, fixed, va);
    }
    Status vmm_free_reservation(uint64_t va, uint64_t bytes) override { return cur().vmm_free_reservation(va, bytes); }
    Status vmm_create(uint64_t bytes, uint64_t* handle) override { return cur().vmm_create(bytes, handle); }
    Status vmm_release(uint64_t handle) override { return cur().vmm_release(handle); }
    Status vmm_map(uint64_t va, uint64_t bytes, uint64_t handle) override { return cur().vmm_map(va, bytes, handle); }
    Status vmm_unmap(uint64_t va, uint64_t bytes) override { return cur().vmm_unmap(va, bytes); }
    Status vmm_set_access(uint64_t va, uint64_t bytes, uint32_t flags) override {
        return cur().vmm_set_access(va, bytes, flags);
    }
    Status mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes) override {
        return cur().mem_get_info(free_bytes, total_bytes);
    }
    Status memcpy_htod(uint64_t dst, const void* src, uint64_t bytes, BackendStream s, bool async) override {
        return cur().memcpy_htod(dst, src, bytes, s, async);
    }
    Status memcpy_dtoh(void* dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) override {
        return cur().memcpy_dtoh(dst, src, bytes, s, async);
    }
    Status memcpy_dtod(uint64_t dst, uint64_t src, uint64_t bytes, BackendStream s, bool async) override {
        return cur().memcpy_dtod(dst, src, bytes, s, async);
    }
    Status memcpy_htod_sg(uint64_t dst, std::span<const memmap::HostRun> runs, SgStrategy how, BackendStream s,
                          bool async) override {
        return cur().memcpy_htod_sg(dst, runs, how, s, async);
    }
    Status memcpy_dtoh_sg(uint64_t src, std::span<const memmap::HostRun> runs, SgStrategy how, BackendStream s,
                          bool async) override {
        return cur().memcpy_dtoh_sg(src, runs, how, s, async);
    }
    Status memcpy_sg_walk(bool htod, uint64_t dptr, const SgWalk& walk, BackendStream s, bool async) override {
        return cur().memcpy_sg_walk(htod, dptr, walk, s, async);
    }
    Status memset(uint64_t dptr, uint32_t value, uint32_t element_bytes, uint64_t count, BackendStream s,
                  bool async) override {
        return cur().memset(dptr, value, element_bytes, count, s, async);
    }
    Status memcpy_peer(int dst_device, uint64_t dst, int src_device, uint64_t src, uint64_t bytes, BackendStream s,
                       bool async) override;
    Status can_access_peer(int device, int peer_device, int* out) override;
    // The pair's backends answer where they can (CUDA: two GPUs), else the
    // default answer from can_access_peer.
    Status p2p_attribute(int attribute, int device, int peer_device, int* out) override;
    Status set_peer_access(int device, int peer_device, bool enable) override;

    Status module_load(std::span<const uint8_t> image, BackendModule* out) override {
        return cur().module_load(image, out);
    }
    Status module_unload(BackendModule m) override { return cur().module_unload(m); }
    Status module_get_function(BackendModule m, std::string_view name, BackendFunction* out,
                               ParamLayout* layout) override {
        return cur().module_get_function(m, name, out, layout);
    }
    Status module_get_global(BackendModule m, std::string_view name, uint64_t* dptr, uint64_t* bytes) override {
        return cur().module_get_global(m, name, dptr, bytes);
    }
    Status function_attribute(BackendFunction f, int attribute, int* out) override {
        return cur().function_attribute(f, attribute, out);
    }
    Status set_function_attribute(BackendFunction f, int attribute, int value) override {
        return cur().set_function_attribute(f, attribute, value);
    }
    Status launch(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                  std::span<void* const> params, std::span<const uint16_t> sizes, bool cooperative) override {
        return cur().launch(f, grid, block, shared_bytes, s, params, sizes, cooperative);
    }
    Status launch_packed(BackendFunction f, Dim3 grid, Dim3 block, uint32_t shared_bytes, BackendStream s,
                         std::span<const uint8_t> buffer, const ParamLayout& layout, bool cooperative) override {
        return cur().launch_packed(f, grid, block, shared_bytes, s, buffer, layout, cooperative);
    }
    Status occupancy(BackendFunction f, uint32_t block, uint64_t dynamic_shared, uint32_t flags, int* out) override {
        return cur().occupancy(f, block, dynamic_shared, flags, out);
    }
    Status get_limit(int limit, uint64_t* out) override { return cur().get_limit(limit, out); }
    Status array_create(const ArrayShape& shape, BackendArray* out) override { return cur().array_create(shape, out); }
    Status array_destroy(BackendArray a) override { return cur().array_destroy(a); }
    Status memcpy_3d(const Copy3D& copy, BackendStream s, bool async) override { return cur().memcpy_3d(copy, s, async); }
    Status sampled_object_create(const TextureSpec& spec, bool surface, uint64_t* out) override {
        return cur().sampled_object_create(spec, surface, out);
    }
    Status sampled_object_destroy(uint64_t object, bool surface) override {
        return cur().sampled_object_destroy(object, surface);
    }
    Status set_limit(int limit, uint64_t value) override { return cur().set_limit(limit, value); }

    Status stream_create(uint32_t flags, BackendStream* out) override { return cur().stream_create(flags, out); }
    Status stream_synchronize(BackendStream s) override { return cur().stream_synchronize(s); }
    Status stream_destroy(BackendStream s) override { return cur().stream_destroy(s); }
    Status stream_query(BackendStream s) override { return cur().stream_query(s); }
    Status stream_wait_event(BackendStream s, BackendEvent e) override { return cur().stream_wait_event(s, e); }
    Status event_create(uint32_t flags, BackendEvent* out) override { return cur().event_create(flags, out); }
    Status event_record(BackendEvent e, BackendStream s) override { return cur().event_record(e, s); }
    Status event_synchronize(BackendEvent e) override { return cur().event_synchronize(e); }
    Status event_elapsed_ms(BackendEvent start, BackendEvent end, float* ms) override {
        return cur().event_elapsed_ms(start, end, ms);
    }
    Status event_destroy(BackendEvent e) override { return cur().event_destroy(e); }
    Status event_query(BackendEvent e) override { return cur().event_query(e); }

    GraphBackend* graphs() override { return cur().graphs(); }
    bool recover_from(Status s) override { return cur().recover_from(s); }

    size_t size() const { return devices_.size(); }

private:
    GpuBackend& cur() const { return *devices_[selected_]; }
    bool valid(int device) const { return device >= 0 && static_cast<size_t>(device) < devices_.size(); }
    Status staged_copy(GpuBackend& from, GpuBackend& to, uint64_t dst, uint64_t src, uint64_t bytes);
    // True once per (source, destination) pair: the first copy logs its path.
    bool first_copy_between(int dst_device, int src_device);
    static void say_path(int dst_device, int src_device, const char* path);

    std::vector<std::unique_ptr<GpuBackend>> devices_;
    size_t selected_ = 0;
    std::vector<uint8_t> staging_; // a copy between devices, made on first use
    std::vector<bool> path_said_;  // by src * size() + dst
};

} // namespace kvmgpu::vgpu
