// Shared by the worker tests: a RemoteBackend hosting the host backend in
// a worker process, and guest RAM (MAP_SHARED) mapped before it is forked.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/support/get_function.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/remote_backend.h"
#include "memmap/backing.h"

namespace kvmgpu::vgpu::test {

inline BackendFactory host_factory() {
    return [](std::string*) -> std::unique_ptr<GpuBackend> { return std::make_unique<HostBackend>(); };
}

struct WorkerRig {
    std::unique_ptr<memmap::Backing> ram; // before the backend: the worker is forked with it mapped
    std::unique_ptr<RemoteBackend> be;

    explicit WorkerRig(RemoteBackendOptions opts = {}, uint64_t ram_bytes = 4ull << 20)
        : ram(memmap::Backing::create(memmap::PageSize::k4K, ram_bytes)) {
        std::string why;
        be = RemoteBackend::create(host_factory(), opts, &why);
        EXPECT_TRUE(be) << why;
        if (be) {
            EXPECT_EQ(be->register_guest_ram(ram->data(), ram->size()), VGPU_SUCCESS);
        }
    }
    uint8_t* at(uint64_t off) { return ram->data() + off; }
};

// Allocates `bytes`, copies `src` (guest RAM or not) in, returns the address.
inline uint64_t upload(GpuBackend& be, const void* src, uint64_t bytes) {
    uint64_t d = 0;
    EXPECT_EQ(be.mem_alloc(bytes, &d), VGPU_SUCCESS);
    EXPECT_EQ(be.memcpy_htod(d, src, bytes, 0, false), VGPU_SUCCESS);
    return d;
}

// vector_add (a CPU reference kernel) over n floats: c = a + b. Returns the launch status.
inline Status vector_add(GpuBackend& be, BackendFunction fn, uint64_t a, uint64_t b, uint64_t c, uint32_t n) {
    void* params[] = {&a, &b, &c, &n};
    const uint16_t sizes[] = {8, 8, 8, 4};
    return be.launch(fn, {(n + 255) / 256, 1, 1}, {256, 1, 1}, 0, 0, params, sizes);
}

inline BackendFunction load_vector_add(GpuBackend& be) {
    static const uint8_t image[] = "any non-empty image: the host backend runs CPU kernels";
    BackendModule m = 0;
    BackendFunction f = 0;
    EXPECT_EQ(be.module_load({image, sizeof image - 1}, &m), VGPU_SUCCESS);
    EXPECT_EQ(kvmgpu::test::get_function(be, m, "vector_add", &f), VGPU_SUCCESS);
    return f;
}

} // namespace kvmgpu::vgpu::test
