// Arrays, 3-D copies, texture and surface objects through the ring on a real
// GPU (label gpu; skipped without one): a kernel samples the texture object
// the guest got and writes through the surface object, so the value the VMM
// hands out is the driver's; RESET frees the arrays and objects.
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/cuda_backend.h"
#include "tests/support/gpu_test_kernels.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr uint32_t kW = 64, kH = 32, kFloat = 0x20;

TEST(CudaVgpu, ArraysTexturesAndSurfacesThroughTheRing) {
    std::string why;
    auto be = CudaBackend::create(CudaBackendOptions{}, &why);
    if (!be) GTEST_SKIP() << "no CUDA backend: " << why;
    VgpuRig rig(VgpuOptions{}, std::move(be));
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    uint64_t fetch = 0, write = 0;
    const uint64_t module = rig.module_with("tex_fetch_2d", &fetch, test_fatbin());
    const std::string_view write_name = "surf_write_2d";
    const Done w = rig.call({.opcode = VGPU_OP_MODULE_GET_FUNCTION, .args = {module},
                             .payload = std::vector<uint8_t>(write_name.begin(), write_name.end())});
    ASSERT_EQ(w.status, VGPU_SUCCESS);
    write = w.r0;

    std::vector<float> host(kW * kH), back(kW * kH);
    for (uint32_t i = 0; i < kW * kH; ++i) host[i] = static_cast<float>((i / kW) * 1000 + i % kW);
    constexpr uint64_t kIn = kDataGpa, kOut = kDataGpa + 0x100000;
    rig.put(kIn, host.data(), host.size() * 4);
    const Done a = rig.call({.opcode = VGPU_OP_ARRAY_CREATE,
                             .payload = bytes(vgpu_array_desc{kW, kH, 0, kFloat, 1, kArrayFlagSurface, 0})});
    ASSERT_EQ(a.status, VGPU_SUCCESS);
    const vgpu_copy_side host_side{VGPU_COPY_HOST, 0, kIn, 0, 0, 0, kW * 4, 0};
    const vgpu_copy_side array_side{VGPU_COPY_ARRAY, 0, a.r0, 0, 0, 0, 0, 0};
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_3D, .args = {0},
                        .payload = bytes(vgpu_copy3d{host_side, array_side, kW * 4, kH, 1})})
                  .status,
              VGPU_SUCCESS);

    // Sampled by a kernel through the object the guest holds.
    const vgpu_tex_resource res{0, 0, 0, 0, a.r0, 0, 0, 0, 0};
    const vgpu_tex_desc point{{1, 1, 1}, 0, 0, 0, 0, 0, 0, 0, {0, 0, 0, 0}};
    const Done tex = rig.call({.opcode = VGPU_OP_TEX_OBJECT_CREATE, .payload = bytes(vgpu_tex_object{res, point})});
    ASSERT_EQ(tex.status, VGPU_SUCCESS);
    const uint64_t out = rig.alloc(kW * kH * 4);
    const std::vector<std::vector<uint8_t>> fetch_params = {bytes(tex.r0), bytes(out), bytes(kW), bytes(kH)};
    ASSERT_EQ(rig.launch(fetch, fetch_params, 1, kH, kW, 1).status, VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kOut, out, kW * kH * 4, 0}}).status, VGPU_SUCCESS);
    rig.get(kOut, back.data(), back.size() * 4);
    EXPECT_EQ(back, host);

    // Written by a kernel through a surface object, read back by a copy.
    const Done surf = rig.call({.opcode = VGPU_OP_SURF_OBJECT_CREATE, .payload = bytes(res)});
    ASSERT_EQ(surf.status, VGPU_SUCCESS);
    const std::vector<std::vector<uint8_t>> write_params = {bytes(surf.r0), bytes(kW), bytes(kH)};
    ASSERT_EQ(rig.launch(write, write_params, 1, kH, kW, 1).status, VGPU_SUCCESS);
    const vgpu_copy_side host_out{VGPU_COPY_HOST, 0, kOut, 0, 0, 0, kW * 4, 0};
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_3D, .args = {0},
                        .payload = bytes(vgpu_copy3d{array_side, host_out, kW * 4, kH, 1})})
                  .status,
              VGPU_SUCCESS);
    rig.get(kOut, back.data(), back.size() * 4);
    EXPECT_EQ(back[5 * kW + 7], 2.0f * (5 * 1000 + 7));
    EXPECT_EQ(back[kW * kH - 1], 2.0f * ((kH - 1) * 1000 + kW - 1));

    // Checked destroys, then RESET frees what is left (the array, the texture).
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_SURF_OBJECT_DESTROY, .args = {surf.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_SURF_OBJECT_DESTROY, .args = {surf.r0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_TEX_OBJECT_DESTROY, .args = {surf.r0 + 12345}}).status,
              VGPU_ERROR_INVALID_VALUE);
    const Done before = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
    rig.reset();
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const Done after = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
    EXPECT_GT(after.r0, before.r0); // the array's charge (and the allocation) came back
}

} // namespace
} // namespace kvmgpu::vgpu::test
