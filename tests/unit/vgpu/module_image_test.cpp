// What the host backend takes for a module image: what the driver would
// not refuse at once (a sound fatbin header, a CUDA ELF, PTX text).
#include <gtest/gtest.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"
#include "kvmtool-gpu/devices/vgpu/backends/module_image.h"
#include "tests/support/host_module_image.h"

namespace kvmgpu::vgpu::test {
namespace {

std::vector<uint8_t> fatbin(uint16_t header_bytes, uint64_t payload_bytes, size_t image_bytes) {
    std::vector<uint8_t> v(image_bytes, 0xAB);
    const uint32_t magic = 0xBA55ED50u;
    const uint16_t version = 1;
    std::memcpy(v.data(), &magic, 4);
    std::memcpy(v.data() + 4, &version, 2);
    std::memcpy(v.data() + 6, &header_bytes, 2);
    std::memcpy(v.data() + 8, &payload_bytes, 8);
    return v;
}

std::vector<uint8_t> elf(uint16_t machine) {
    std::vector<uint8_t> v(64, 0);
    const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    std::memcpy(v.data(), ident, sizeof ident);
    std::memcpy(v.data() + 18, &machine, 2);
    return v;
}

std::vector<uint8_t> text(std::string_view t) { return {t.begin(), t.end()}; }

TEST(ModuleImage, FatbinHeaderMustFitTheImage) {
    EXPECT_EQ(module_image_kind(fatbin(16, 48, 64)), ModuleImageKind::Fatbin);
    EXPECT_EQ(module_image_kind(fatbin(16, 48, 200)), ModuleImageKind::Fatbin); // trailing bytes: ignored
    EXPECT_EQ(module_image_kind(fatbin(16, 49, 64)), ModuleImageKind::Invalid);
    EXPECT_EQ(module_image_kind(fatbin(16, 0, 64)), ModuleImageKind::Invalid);
    EXPECT_EQ(module_image_kind(fatbin(8, 48, 64)), ModuleImageKind::Invalid);
    EXPECT_EQ(module_image_kind(fatbin(16, ~0ull, 64)), ModuleImageKind::Invalid); // no wrap
    EXPECT_EQ(module_image_kind(fatbin(0xFFFF, 1, 64)), ModuleImageKind::Invalid);
    const auto whole = fatbin(16, 48, 64);
    EXPECT_EQ(module_image_kind(std::span(whole).first(15)), ModuleImageKind::Invalid);
}

TEST(ModuleImage, CubinIsA64BitElfForCuda) {
    EXPECT_EQ(module_image_kind(elf(190)), ModuleImageKind::Cubin);
    EXPECT_EQ(module_image_kind(elf(62)), ModuleImageKind::Invalid); // x86-64
    const auto cubin = elf(190);
    EXPECT_EQ(module_image_kind(std::span(cubin).first(40)), ModuleImageKind::Invalid);
}

TEST(ModuleImage, PtxIsTextWithVersionAndTarget) {
    EXPECT_EQ(module_image_kind(text(kHostModulePtx)), ModuleImageKind::Ptx);
    EXPECT_EQ(module_image_kind(text(std::string_view(".version 8.0\n.target sm_90\n\0\x01\x02", 30))), ModuleImageKind::Ptx);
    EXPECT_EQ(module_image_kind(text(".target sm_90\n")), ModuleImageKind::Invalid);
    EXPECT_EQ(module_image_kind(text(".version 8.0\n")), ModuleImageKind::Invalid);
    EXPECT_EQ(module_image_kind(text(".version 8.0\n\x01.target sm_90\n")), ModuleImageKind::Invalid);
    EXPECT_EQ(module_image_kind(text("img!")), ModuleImageKind::Invalid);
    EXPECT_EQ(module_image_kind({}), ModuleImageKind::Invalid);
}

TEST(ModuleImage, TheHostBackendRefusesJunkAsCudaDoes) {
    HostBackend host{HostBackendOptions{}};
    BackendModule m = 0;
    EXPECT_EQ(host.module_load(text("img!"), &m), VGPU_ERROR_INVALID_IMAGE);
    EXPECT_EQ(host.module_load(elf(62), &m), VGPU_ERROR_INVALID_IMAGE);
    EXPECT_EQ(host.module_load(text(kHostModulePtx), &m), VGPU_SUCCESS);
    EXPECT_EQ(host.module_load(fatbin(16, 48, 64), &m), VGPU_SUCCESS);
    EXPECT_EQ(host.module_load(elf(190), &m), VGPU_SUCCESS);
}

} // namespace
} // namespace kvmgpu::vgpu::test
