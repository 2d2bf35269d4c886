// Texture and surface objects through the ring on the host backend: made on
// arrays, linear and pitched memory; their resources read back; destroy
// checked (kind, owner, twice); hostile resources and descriptors refused;
// a linear resource declared past its allocation cut there;
// a context's objects go with it.
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

constexpr uint32_t kFloat = 0x20;

struct VgpuTextures : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 4ull << 20, .max_handles = 8}};
    uint64_t plain = 0, surfaceable = 0, mem = 0;
    void SetUp() override {
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
        plain = make_array(0);
        surfaceable = make_array(kArrayFlagSurface);
        mem = rig.alloc(64 * 1024);
    }
    uint64_t make_array(uint32_t flags) {
        const Done d = rig.call({.opcode = VGPU_OP_ARRAY_CREATE,
                                 .payload = bytes(vgpu_array_desc{32, 32, 0, kFloat, 1, flags, 0})});
        EXPECT_EQ(d.status, VGPU_SUCCESS);
        return d.r0;
    }
    static vgpu_tex_resource on_array(uint64_t a) { return vgpu_tex_resource{0, 0, 0, 0, a, 0, 0, 0, 0}; }
    static vgpu_tex_desc clamp_point() { return vgpu_tex_desc{{1, 1, 1}, 0, 0x02, 0, 0, 0, 0, 0, {0, 0, 0, 0}}; }
    Done texture(const vgpu_tex_resource& r, const vgpu_tex_desc& t = clamp_point()) {
        return rig.call({.opcode = VGPU_OP_TEX_OBJECT_CREATE, .payload = bytes(vgpu_tex_object{r, t})});
    }
    Done surface(const vgpu_tex_resource& r) { return rig.call({.opcode = VGPU_OP_SURF_OBJECT_CREATE, .payload = bytes(r)}); }
    Done destroy(uint64_t o, bool surf) {
        return rig.call({.opcode = surf ? VGPU_OP_SURF_OBJECT_DESTROY : VGPU_OP_TEX_OBJECT_DESTROY, .args = {o}});
    }
    Done resource(uint64_t o, bool surf) {
        return rig.call({.opcode = VGPU_OP_SAMPLED_OBJECT_RESOURCE, .args = {o, surf ? 1u : 0u}});
    }
};

TEST_F(VgpuTextures, ObjectsOnEveryResourceKindAndTheirResourcesBack) {
    const Done t = texture(on_array(plain));
    ASSERT_EQ(t.status, VGPU_SUCCESS);
    EXPECT_NE(t.r0, 0u);
    const Done linear = texture(vgpu_tex_resource{2, kFloat, 4, 0, mem, 4096, 0, 0, 0});
    ASSERT_EQ(linear.status, VGPU_SUCCESS);
    const Done pitched = texture(vgpu_tex_resource{3, kFloat, 1, 0, mem + 512, 0, 100, 120, 512});
    ASSERT_EQ(pitched.status, VGPU_SUCCESS);
    const Done s = surface(on_array(surfaceable));
    ASSERT_EQ(s.status, VGPU_SUCCESS);

    const Done back = resource(pitched.r0, false);
    ASSERT_EQ(back.status, VGPU_SUCCESS);
    vgpu_tex_resource r;
    std::memcpy(&r, back.payload.data(), sizeof r);
    EXPECT_EQ(r.type, 3u);
    EXPECT_EQ(r.handle, mem + 512);
    EXPECT_EQ(r.pitch, 512u);
    const Done back_array = resource(t.r0, false);
    std::memcpy(&r, back_array.payload.data(), sizeof r);
    EXPECT_EQ(r.handle, plain); // the guest's handle, not the backend's array
    EXPECT_EQ(resource(s.r0, false).status, VGPU_ERROR_INVALID_VALUE); // a surface asked for as a texture

    EXPECT_EQ(destroy(s.r0, false).status, VGPU_ERROR_INVALID_VALUE); // wrong kind
    EXPECT_EQ(destroy(s.r0, true).status, VGPU_SUCCESS);
    EXPECT_EQ(destroy(s.r0, true).status, VGPU_ERROR_INVALID_VALUE); // twice
    EXPECT_EQ(destroy(t.r0, false).status, VGPU_SUCCESS);
    EXPECT_EQ(resource(t.r0, false).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(destroy(0xdead, false).status, VGPU_ERROR_INVALID_VALUE); // never made
}

TEST_F(VgpuTextures, HostileResourcesAndDescriptorsAreRefused) {
    EXPECT_EQ(texture(on_array(plain ^ (1ull << 40))).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(texture(on_array(mem)).status, VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(surface(on_array(plain)).status, VGPU_ERROR_INVALID_VALUE); // not made for load/store
    EXPECT_EQ(surface(vgpu_tex_resource{2, kFloat, 1, 0, mem, 4096, 0, 0, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(texture(vgpu_tex_resource{1, 0, 0, 0, plain, 0, 0, 0, 0}).status, VGPU_ERROR_NOT_SUPPORTED); // mipmapped
    EXPECT_EQ(texture(vgpu_tex_resource{7, 0, 0, 0, plain, 0, 0, 0, 0}).status, VGPU_ERROR_INVALID_VALUE);
    vgpu_tex_resource flagged = on_array(plain);
    flagged.flags = 1;
    EXPECT_EQ(texture(flagged).status, VGPU_ERROR_INVALID_VALUE);
    // Linear: starting outside, wrapping, empty, a format or channel count not offered.
    EXPECT_EQ(texture(vgpu_tex_resource{2, kFloat, 1, 0, mem - 4, 64, 0, 0, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(texture(vgpu_tex_resource{2, kFloat, 1, 0, UINT64_MAX - 8, 64, 0, 0, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(texture(vgpu_tex_resource{2, kFloat, 1, 0, mem, 0, 0, 0, 0}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(texture(vgpu_tex_resource{2, 0xb0, 1, 0, mem, 64, 0, 0, 0}).status, VGPU_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(texture(vgpu_tex_resource{2, kFloat, 3, 0, mem, 64, 0, 0, 0}).status, VGPU_ERROR_INVALID_VALUE);
    // Pitched: a pitch narrower than a row, rows past the allocation, a product that wraps.
    EXPECT_EQ(texture(vgpu_tex_resource{3, kFloat, 1, 0, mem, 0, 100, 10, 396}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(texture(vgpu_tex_resource{3, kFloat, 1, 0, mem, 0, 100, 200, 512}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(texture(vgpu_tex_resource{3, kFloat, 1, 0, mem, 0, 1ull << 62, 2, UINT64_MAX}).status,
              VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(texture(vgpu_tex_resource{3, kFloat, 1, 0, mem, 0, 16, 3, UINT64_MAX / 2}).status,
              VGPU_ERROR_INVALID_VALUE);
    // Descriptors: address mode, filter mode, flags.
    vgpu_tex_desc bad = clamp_point();
    bad.address_mode[2] = 4;
    EXPECT_EQ(texture(on_array(plain), bad).status, VGPU_ERROR_INVALID_VALUE);
    bad = clamp_point();
    bad.filter_mode = 2;
    EXPECT_EQ(texture(on_array(plain), bad).status, VGPU_ERROR_INVALID_VALUE);
    bad = clamp_point();
    bad.flags = 0x80;
    EXPECT_EQ(texture(on_array(plain), bad).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_TEX_OBJECT_CREATE, .payload = bytes(on_array(plain))}).status,
              VGPU_ERROR_INVALID_VALUE); // a surface's payload size
    EXPECT_EQ(texture(on_array(plain)).status, VGPU_SUCCESS); // the good one still works
}

TEST_F(VgpuTextures, ALinearResourcePastItsAllocationIsCutToWholeElements) {
    const Done t = texture(vgpu_tex_resource{2, kFloat, 4, 0, mem + 1000, 64 * 1024, 0, 0, 0});
    ASSERT_EQ(t.status, VGPU_SUCCESS);
    const Done back = resource(t.r0, false);
    ASSERT_EQ(back.status, VGPU_SUCCESS);
    vgpu_tex_resource r;
    std::memcpy(&r, back.payload.data(), sizeof r);
    EXPECT_EQ(r.bytes, 64u * 1024) << "read back as declared, as the driver does";
    // Not one whole element inside: refused.
    EXPECT_EQ(texture(vgpu_tex_resource{2, kFloat, 1, 0, mem + 64 * 1024 - 2, 64, 0, 0, 0}).status,
              VGPU_ERROR_INVALID_VALUE);
    // Pitched resources are not cut: their rows are their shape.
    EXPECT_EQ(texture(vgpu_tex_resource{3, kFloat, 1, 0, mem, 0, 100, 200, 512}).status, VGPU_ERROR_INVALID_VALUE);
}

TEST_F(VgpuTextures, AContextsObjectsGoWithItAndTheTableIsBounded) {
    const uint64_t primary = rig.call({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {0}}).r0;
    const uint64_t t0 = texture(on_array(plain)).r0;
    const uint64_t ctx = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}}).r0;
    EXPECT_EQ(texture(on_array(plain)).status, VGPU_ERROR_INVALID_HANDLE); // the primary context's array
    EXPECT_EQ(destroy(t0, false).status, VGPU_ERROR_INVALID_VALUE);      // the primary context's object
    const uint64_t a = make_array(kArrayFlagSurface);
    const uint64_t t1 = texture(on_array(a)).r0;
    const uint64_t s1 = surface(on_array(a)).r0;
    ASSERT_NE(t1, 0u);
    ASSERT_NE(s1, 0u);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_DESTROY, .args = {ctx}}).status, VGPU_SUCCESS);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {primary}}).status, VGPU_SUCCESS);
    // The host backend knows only the primary context's object now.
    EXPECT_EQ(rig.host->arrays()->sampled_object_destroy(t1, false), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.host->arrays()->sampled_object_destroy(s1, true), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(resource(t0, false).status, VGPU_SUCCESS);
    // max_handles = 8 objects live at once.
    for (int i = 1; i < 8; ++i) ASSERT_EQ(texture(on_array(plain)).status, VGPU_SUCCESS);
    EXPECT_EQ(texture(on_array(plain)).status, VGPU_ERROR_OUT_OF_MEMORY);
    ASSERT_EQ(destroy(t0, false).status, VGPU_SUCCESS);
    EXPECT_EQ(texture(on_array(plain)).status, VGPU_SUCCESS);
}

} // namespace
} // namespace kvmgpu::vgpu::test
