// Arrays and 3-D copies through the ring on the host backend: round trips
// between guest RAM, device memory and arrays (pitched, partial boxes,
// layered), the quota, context ownership, and every hostile field refused.
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr uint32_t kFloat = 0x20, kInt32 = 0x0a;

vgpu_array_desc shape(uint64_t w, uint64_t h, uint64_t d = 0, uint32_t format = kFloat, uint32_t ch = 1,
                      uint32_t flags = 0) {
    return vgpu_array_desc{w, h, d, format, ch, flags, 0};
}

vgpu_copy_side host_side(uint64_t gpa, uint64_t pitch, uint64_t height = 0) {
    return vgpu_copy_side{VGPU_COPY_HOST, 0, gpa, 0, 0, 0, pitch, height};
}
vgpu_copy_side device_side(uint64_t dptr, uint64_t pitch, uint64_t height = 0) {
    return vgpu_copy_side{VGPU_COPY_DEVICE, 0, dptr, 0, 0, 0, pitch, height};
}
vgpu_copy_side array_side(uint64_t array, uint64_t x_bytes = 0, uint64_t y = 0, uint64_t z = 0) {
    return vgpu_copy_side{VGPU_COPY_ARRAY, 0, array, x_bytes, y, z, 0, 0};
}

struct VgpuArrays : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 4ull << 20, .max_handles = 8}};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }

    Done create(const vgpu_array_desc& d) { return rig.call({.opcode = VGPU_OP_ARRAY_CREATE, .payload = bytes(d)}); }
    uint64_t array(const vgpu_array_desc& d) {
        const Done r = create(d);
        EXPECT_EQ(r.status, VGPU_SUCCESS);
        return r.r0;
    }
    Done copy(const vgpu_copy_side& src, const vgpu_copy_side& dst, uint64_t w, uint64_t h, uint64_t d = 1) {
        return rig.call({.opcode = VGPU_OP_MEMCPY_3D, .args = {0}, .payload = bytes(vgpu_copy3d{src, dst, w, h, d})});
    }
    uint64_t used() {
        const Done d = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
        return d.r1 - d.r0;
    }
    // n floats 0, 1, 2, ... at gpa.
    void fill(uint64_t gpa, uint32_t n) {
        for (uint32_t i = 0; i < n; ++i) {
            const float v = static_cast<float>(i);
            rig.put(gpa + 4ull * i, &v, 4);
        }
    }
    float at(uint64_t gpa) {
        float v;
        rig.get(gpa, &v, 4);
        return v;
    }
};

TEST(ArrayShape, OfferedShapesAndRefusals) {
    ArrayShape s;
    bool ns = false;
    EXPECT_EQ(check_array_shape(shape(64, 32, 0, kFloat, 4), &s, &ns), nullptr);
    EXPECT_EQ(s.element_bytes, 16u);
    EXPECT_EQ(s.bytes(), 64u * 32 * 16);
    EXPECT_EQ(check_array_shape(shape(100, 0), &s, &ns), nullptr); // 1-D
    EXPECT_EQ(s.bytes(), 400u);
    EXPECT_EQ(check_array_shape(shape(16, 0, 3, kFloat, 1, kArrayFlagLayered), &s, &ns), nullptr); // 1-D layered
    EXPECT_EQ(check_array_shape(shape(8, 8, 12, kFloat, 1, kArrayFlagCubemap | kArrayFlagLayered), &s, &ns), nullptr);
    EXPECT_NE(check_array_shape(shape(16, 0, 3), &s, &ns), nullptr);          // depth without height, not layered
    EXPECT_NE(check_array_shape(shape(8, 4, 6, kFloat, 1, kArrayFlagCubemap), &s, &ns), nullptr); // not square
    EXPECT_NE(check_array_shape(shape(8, 8, 5, kFloat, 1, kArrayFlagCubemap), &s, &ns), nullptr); // not six faces
    EXPECT_NE(check_array_shape(shape(8, 8, 0, kFloat, 3), &s, &ns), nullptr);
    EXPECT_FALSE(ns);
    EXPECT_NE(check_array_shape(shape(0, 8), &s, &ns), nullptr);
    EXPECT_NE(check_array_shape(shape(kMaxArrayDimension + 1, 1), &s, &ns), nullptr);
    EXPECT_FALSE(ns);
    EXPECT_NE(check_array_shape(shape(8, 8, 0, 0xb0), &s, &ns), nullptr); // NV12: valid CUDA, not offered
    EXPECT_TRUE(ns);
    EXPECT_NE(check_array_shape(shape(8, 8, 0, kFloat, 1, 0x40), &s, &ns), nullptr); // SPARSE
    EXPECT_TRUE(ns);
}

TEST(ArrayShape, CopySpanRule) {
    uint64_t first = 0, n = 0;
    const vgpu_copy_side s{VGPU_COPY_HOST, 0, 0, 8, 2, 1, 256, 10};
    ASSERT_TRUE(vgpu_copy_span(&s, 100, 4, 3, &first, &n));
    EXPECT_EQ(first, 8u + 256 * (2 + 10 * 1));
    EXPECT_EQ(n, 256u * (3 + 10 * 2) + 100);
    vgpu_copy_side narrow = s;
    narrow.pitch = 99;
    EXPECT_FALSE(vgpu_copy_span(&narrow, 100, 4, 1, &first, &n)); // rows overlap
    EXPECT_TRUE(vgpu_copy_span(&narrow, 100, 1, 1, &first, &n));  // one row: the pitch is not used
    vgpu_copy_side short_slice = s;
    short_slice.height = 3;
    EXPECT_FALSE(vgpu_copy_span(&short_slice, 100, 4, 2, &first, &n));
    const vgpu_copy_side huge{VGPU_COPY_HOST, 0, 0, 0, 0, 0, UINT64_MAX / 2, 4};
    EXPECT_FALSE(vgpu_copy_span(&huge, 8, 4, 1, &first, &n)); // 3 rows of 2^63 wrap
}

TEST_F(VgpuArrays, TwoDimensionalRoundTripThroughArrayAndDevice) {
    const uint64_t a = array(shape(64, 32));
    // Host rows of 64 floats at a pitch of 300 bytes, into the whole array.
    constexpr uint64_t kPitch = 300, kIn = kDataGpa, kOut = kDataGpa + 0x40000;
    for (uint32_t y = 0; y < 32; ++y)
        for (uint32_t x = 0; x < 64; ++x) {
            const float v = static_cast<float>(y * 1000 + x);
            rig.put(kIn + y * kPitch + 4 * x, &v, 4);
        }
    ASSERT_EQ(copy(host_side(kIn, kPitch), array_side(a), 256, 32).status, VGPU_SUCCESS);
    // A box (x 8..23, y 4..13) to pitched device memory, then back to guest RAM.
    const uint64_t dev = rig.alloc(64 * 10);
    ASSERT_EQ(copy(array_side(a, 8 * 4, 4), device_side(dev, 64), 64, 10).status, VGPU_SUCCESS);
    ASSERT_EQ(copy(device_side(dev, 64), host_side(kOut, 64), 64, 10).status, VGPU_SUCCESS);
    for (uint32_t y = 0; y < 10; ++y)
        for (uint32_t x = 0; x < 16; ++x) ASSERT_EQ(at(kOut + y * 64 + 4 * x), static_cast<float>((y + 4) * 1000 + x + 8));
    // Array to array and back to the host.
    const uint64_t b = array(shape(16, 10));
    ASSERT_EQ(copy(array_side(a, 8 * 4, 4), array_side(b), 64, 10).status, VGPU_SUCCESS);
    ASSERT_EQ(copy(array_side(b, 4, 9), host_side(kOut, 4), 4, 1).status, VGPU_SUCCESS);
    EXPECT_EQ(at(kOut), static_cast<float>(13 * 1000 + 9));
    // The descriptor comes back as made.
    const Done d = rig.call({.opcode = VGPU_OP_ARRAY_GET_DESCRIPTOR, .args = {a}});
    ASSERT_EQ(d.status, VGPU_SUCCESS);
    vgpu_array_desc got;
    std::memcpy(&got, d.payload.data(), sizeof got);
    EXPECT_EQ(got.width, 64u);
    EXPECT_EQ(got.height, 32u);
    EXPECT_EQ(got.format, kFloat);
}

TEST_F(VgpuArrays, LayeredCopiesUseTheSlicePitch) {
    const uint64_t a = array(shape(8, 8, 4, kInt32, 1, kArrayFlagLayered));
    // Host slices of 10 rows of 32 bytes (8 used), four of them.
    constexpr uint64_t kIn = kDataGpa, kOut = kDataGpa + 0x10000;
    fill(kIn, 8 * 10 * 4);
    ASSERT_EQ(copy(host_side(kIn, 32, 10), array_side(a), 32, 8, 4).status, VGPU_SUCCESS);
    // Layers 1..2, packed, back to the host.
    ASSERT_EQ(copy(array_side(a, 0, 0, 1), host_side(kOut, 32, 8), 32, 8, 2).status, VGPU_SUCCESS);
    EXPECT_EQ(at(kOut), static_cast<float>(80));                     // layer 1, row 0 = host slice 1
    EXPECT_EQ(at(kOut + 32 * 8 + 32 * 7 + 4), static_cast<float>(80 * 2 + 8 * 7 + 1)); // layer 2, row 7, x 1
}

TEST_F(VgpuArrays, HostileCopiesAreRefused) {
    const uint64_t a = array(shape(16, 16));
    const uint64_t dev = rig.alloc(4096);
    const auto status = [&](const vgpu_copy_side& s, const vgpu_copy_side& d, uint64_t w, uint64_t h, uint64_t z = 1) {
        return copy(s, d, w, h, z).status;
    };
    EXPECT_EQ(status(host_side(kDataGpa, 64), array_side(a, 4), 64, 1), VGPU_ERROR_INVALID_VALUE);  // x + width > row
    EXPECT_EQ(status(host_side(kDataGpa, 64), array_side(a, 2), 4, 1), VGPU_ERROR_INVALID_VALUE);   // half an element
    EXPECT_EQ(status(host_side(kDataGpa, 64), array_side(a), 6, 1), VGPU_ERROR_INVALID_VALUE);      // width likewise
    EXPECT_EQ(status(host_side(kDataGpa, 64), array_side(a, 0, 10), 64, 7), VGPU_ERROR_INVALID_VALUE); // past row 16
    EXPECT_EQ(status(host_side(kDataGpa, 64), array_side(a, 0, 0, 1), 64, 1), VGPU_ERROR_INVALID_VALUE); // a 2-D array has one slice
    EXPECT_EQ(status(host_side(kDataGpa, 64), array_side(a, UINT64_MAX - 3), 4, 1), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status(host_side(kDataGpa, 32), array_side(a), 64, 2), VGPU_ERROR_INVALID_VALUE); // pitch < width
    EXPECT_EQ(status(host_side(kRamBytes - 64, 64), array_side(a), 64, 2), VGPU_ERROR_INVALID_VALUE); // past RAM
    EXPECT_EQ(status(host_side(UINT64_MAX - 8, 64), array_side(a), 64, 1), VGPU_ERROR_INVALID_VALUE); // wraps
    EXPECT_EQ(status(host_side(kDataGpa, UINT64_MAX / 2), array_side(a), 64, 4), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status(device_side(dev, 1024), array_side(a), 64, 5), VGPU_ERROR_INVALID_VALUE); // past the allocation
    EXPECT_EQ(status(device_side(dev + 8192, 64), array_side(a), 64, 1), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(status(host_side(kDataGpa, 64), array_side(a + 1), 64, 1), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(status(host_side(kDataGpa, 64), array_side(dev), 64, 1), VGPU_ERROR_INVALID_HANDLE);
    vgpu_copy_side odd = host_side(kDataGpa, 64);
    odd.kind = 9;
    EXPECT_EQ(status(odd, array_side(a), 64, 1), VGPU_ERROR_INVALID_VALUE);
    odd = host_side(kDataGpa, 64);
    odd.reserved = 1;
    EXPECT_EQ(status(odd, array_side(a), 64, 1), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_3D, .args = {0}, .payload = {1, 2, 3}}).status, VGPU_ERROR_INVALID_VALUE);
    const vgpu_copy3d ok{host_side(kDataGpa, 64), array_side(a), 64, 1, 1};
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_3D, .args = {12345}, .payload = bytes(ok)}).status,
              VGPU_ERROR_INVALID_HANDLE); // stream
    EXPECT_EQ(copy(host_side(kDataGpa, 64), array_side(a), 64, 1).status, VGPU_SUCCESS); // and the good one works
}

TEST_F(VgpuArrays, ArraysCountAgainstTheQuotaAndTheirContext) {
    EXPECT_EQ(used(), 0u);
    const uint64_t a = array(shape(64, 64)); // 16 KiB: charged 64 KiB
    EXPECT_EQ(used(), 64u << 10);
    EXPECT_EQ(create(shape(1024, 1024)).status, VGPU_ERROR_OUT_OF_MEMORY); // 4 MiB of a 4 MiB quota already in use
    EXPECT_EQ(create(shape(8, 8, 0, 0xb0)).status, VGPU_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(create(shape(8, 8, 0, kFloat, 3)).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_ARRAY_CREATE, .payload = {0}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(used(), 64u << 10); // refusals cost nothing
    // Another context neither sees nor destroys it; destroying that context frees what it made.
    const uint64_t primary = rig.call({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {0}}).r0;
    const uint64_t ctx = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}}).r0;
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_ARRAY_DESTROY, .args = {a}}).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_ARRAY_GET_DESCRIPTOR, .args = {a}}).status, VGPU_ERROR_INVALID_HANDLE);
    array(shape(16, 16));
    array(shape(16, 16));
    EXPECT_EQ(rig.host->live_arrays(), 3u);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_DESTROY, .args = {ctx}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.host->live_arrays(), 1u);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {primary}}).status, VGPU_SUCCESS);
    EXPECT_EQ(used(), 64u << 10);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_ARRAY_DESTROY, .args = {a}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_ARRAY_DESTROY, .args = {a}}).status, VGPU_ERROR_INVALID_HANDLE); // stale
    EXPECT_EQ(used(), 0u);
    EXPECT_EQ(rig.host->live_arrays(), 0u);
}

TEST_F(VgpuArrays, TheHandleTableBoundsArraysAndResetFreesThem) {
    for (int i = 0; i < 8; ++i) array(shape(4, 4));
    EXPECT_EQ(create(shape(4, 4)).status, VGPU_ERROR_OUT_OF_MEMORY); // max_handles = 8
    EXPECT_EQ(rig.host->live_arrays(), 8u);
    rig.reset();
    EXPECT_EQ(rig.host->live_arrays(), 0u);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(used(), 0u);
}

} // namespace
} // namespace kvmgpu::vgpu::test
