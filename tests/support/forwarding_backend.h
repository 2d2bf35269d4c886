// A GpuBackend that passes every call to another one (the host backend by
// default), for tests that change one behaviour and keep the rest real:
// e.g. a synchronize that reports a non-sticky error the way the CUDA
// backend does after a refused asynchronous device walk, or a launch that
// takes whatever it is given, as the CUDA driver does.
#pragma once

#include <memory>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"
#include "kvmtool-gpu/devices/vgpu/backend_factory.h"

namespace kvmgpu::vgpu::test {

class ForwardingBackend : public GpuBackend {
public:
    explicit ForwardingBackend(std::unique_ptr<GpuBackend> inner = make_host_backend())
        : inner_(std::move(inner)) {}
    GpuBackend& inner() { return *inner_; }

    uint32_t id() const override { return inner_->id(); }
    std::string describe() const override { return "forwarding to " + inner_->describe(); }
    bool real_kernels() const override { return inner_->real_kernels(); }
    SgStrategy default_sg_strategy() const override { return inner_->default_sg_strategy(); }
    SgStrategy auto_sg_strategy(uint64_t n, uint64_t total) const override { return inner_->auto_sg_strategy(n, total); }
    void bind_thread() override { inner_->bind_thread(); }
    Status register_guest_ram(void* host, uint64_t bytes) override { return inner_->register_guest_ram(host, bytes); }
    uint64_t register_ns() const override { return inner_->register_ns(); }
    Status unregister_guest_ram(void* host) override { return inner_->unregister_guest_ram(host); }
    uint64_t guest_ram_device_address(const void* host) const override { return inner_->guest_ram_device_address(host); }
    Status device_attribute(int a, int* out) override { return inner_->device_attribute(a, out); }
    Status device_name(char* buf, size_t len) override { return inner_->device_name(buf, len); }
    Status device_total_mem(uint64_t* out) override { return inner_->device_total_mem(out); }
    Status ctx_synchronize() override { return inner_->ctx_synchronize(); }
    Status mem_alloc(uint64_t bytes, uint64_t* dptr) override { return inner_->mem_alloc(bytes, dptr); }
    Status mem_free(uint64_t dptr) override { return inner_->mem_free(dptr); }
    Status mem_get_info(uint64_t* f, uint64_t* t) override { return inner_->mem_get_info(f, t); }
    Status memcpy_htod(uint64_t d, const void* s, uint64_t n, BackendStream st, bool a) override {
        return inner_->memcpy_htod(d, s, n, st, a);
    }
    Status memcpy_dtoh(void* d, uint64_t s, uint64_t n, BackendStream st, bool a) override {
        return inner_->memcpy_dtoh(d, s, n, st, a);
    }
    Status memcpy_dtod(uint64_t d, uint64_t s, uint64_t n, BackendStream st, bool a) override {
        return inner_->memcpy_dtod(d, s, n, st, a);
    }
    Status memcpy_htod_sg(uint64_t d, std::span<const memmap::HostRun> r, SgStrategy h, BackendStream st,
                          bool a) override {
        return inner_->memcpy_htod_sg(d, r, h, st, a);
    }
    Status memcpy_dtoh_sg(uint64_t s, std::span<const memmap::HostRun> r, SgStrategy h, BackendStream st,
                          bool a) override {
        return inner_->memcpy_dtoh_sg(s, r, h, st, a);
    }
    Status memcpy_sg_walk(bool htod, uint64_t d, const SgWalk& w, BackendStream st, bool a) override {
        return inner_->memcpy_sg_walk(htod, d, w, st, a);
    }
    Status memset(uint64_t d, uint32_t v, uint32_t e, uint64_t n, BackendStream st, bool a) override {
        return inner_->memset(d, v, e, n, st, a);
    }
    Status memset_2d(uint64_t d, uint64_t p, uint32_t v, uint32_t e, uint64_t w, uint64_t h, BackendStream st,
                     bool a) override {
        return inner_->memset_2d(d, p, v, e, w, h, st, a);
    }
    Status stream_write_value(BackendStream st, uint64_t d, uint64_t v, uint32_t b, uint32_t f, bool a) override {
        return inner_->stream_write_value(st, d, v, b, f, a);
    }
    Status stream_wait_value(BackendStream st, uint64_t d, uint64_t v, uint32_t b, uint32_t f, bool a) override {
        return inner_->stream_wait_value(st, d, v, b, f, a);
    }
    Status module_load(std::span<const uint8_t> image, BackendModule* out) override {
        return inner_->module_load(image, out);
    }
    Status module_unload(BackendModule m) override { return inner_->module_unload(m); }
    Status module_get_function(BackendModule m, std::string_view name, BackendFunction* out,
                               ParamLayout* layout) override {
        return inner_->module_get_function(m, name, out, layout);
    }
    Status function_attribute(BackendFunction f, int a, int* out) override { return inner_->function_attribute(f, a, out); }
    Status set_function_attribute(BackendFunction f, int a, int v) override {
        return inner_->set_function_attribute(f, a, v);
    }
    Status module_get_global(BackendModule m, std::string_view name, uint64_t* dptr, uint64_t* bytes) override {
        return inner_->module_get_global(m, name, dptr, bytes);
    }
    Status occupancy(BackendFunction f, uint32_t block, uint64_t dynamic_shared, uint32_t flags, int* out) override {
        return inner_->occupancy(f, block, dynamic_shared, flags, out);
    }
    Status get_limit(int limit, uint64_t* out) override { return inner_->get_limit(limit, out); }
    Status memcpy_3d(const Copy3D& c, BackendStream s, bool a) override { return inner_->memcpy_3d(c, s, a); }
    ArrayBackend* arrays() override { return inner_->arrays(); }
    Status set_limit(int limit, uint64_t value) override { return inner_->set_limit(limit, value); }
    Status stream_create(uint32_t flags, BackendStream* out) override { return inner_->stream_create(flags, out); }
    Status stream_synchronize(BackendStream s) override { return inner_->stream_synchronize(s); }
    Status stream_destroy(BackendStream s) override { return inner_->stream_destroy(s); }
    Status stream_set_attribute(BackendStream s, uint32_t a, const vgpu_stream_attr_value& v) override {
        return inner_->stream_set_attribute(s, a, v);
    }
    Status stream_get_attribute(BackendStream s, uint32_t a, vgpu_stream_attr_value* out) override {
        return inner_->stream_get_attribute(s, a, out);
    }
    Status event_create(uint32_t flags, BackendEvent* out) override { return inner_->event_create(flags, out); }
    Status event_record(BackendEvent e, BackendStream s) override { return inner_->event_record(e, s); }
    Status event_synchronize(BackendEvent e) override { return inner_->event_synchronize(e); }
    Status stream_query(BackendStream s) override { return inner_->stream_query(s); }
    Status stream_wait_event(BackendStream s, BackendEvent e) override { return inner_->stream_wait_event(s, e); }
    Status event_query(BackendEvent e) override { return inner_->event_query(e); }
    Status event_elapsed_ms(BackendEvent a, BackendEvent b, float* ms) override {
        return inner_->event_elapsed_ms(a, b, ms);
    }
    Status event_destroy(BackendEvent e) override { return inner_->event_destroy(e); }
    bool recover_from(Status s) override { return inner_->recover_from(s); }
    BlasLibrary* blas() override { return inner_->blas(); }
    RandLibrary* rand() override { return inner_->rand(); }
    FftLibrary* fft() override { return inner_->fft(); }

protected:
    Status run_launch(BackendFunction f, Dim3 g, Dim3 b, uint32_t sh, BackendStream s, std::span<void* const> p,
                      std::span<const uint16_t> sizes, LaunchMode mode) override {
        return inner_->launch(f, g, b, sh, s, p, sizes, mode);
    }

private:
    std::unique_ptr<GpuBackend> inner_;
};

} // namespace kvmgpu::vgpu::test
