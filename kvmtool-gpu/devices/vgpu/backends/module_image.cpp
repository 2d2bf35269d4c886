#include "kvmtool-gpu/devices/vgpu/backends/module_image.h"

#include <cstring>
#include <string_view>

namespace kvmgpu::vgpu {

namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint16_t kElfMachineCuda = 190; // EM_CUDA

template <class T>
T read_at(std::span<const uint8_t> image, size_t offset) {
    T v;
    std::memcpy(&v, image.data() + offset, sizeof v);
    return v;
}

// A fatbin header: magic, version (u16), header bytes (u16), payload bytes
// (u64); the payload follows the header and must not be empty.
bool is_fatbin(std::span<const uint8_t> image) {
    if (image.size() < 16 || read_at<uint32_t>(image, 0) != kFatbinMagic) return false;
    const uint64_t header = read_at<uint16_t>(image, 6), payload = read_at<uint64_t>(image, 8);
    return header >= 16 && payload != 0 && payload <= image.size() && header <= image.size() - payload;
}

bool is_cubin(std::span<const uint8_t> image) {
    static constexpr uint8_t kElf64[] = {0x7f, 'E', 'L', 'F', 2 /* ELFCLASS64 */};
    return image.size() >= 64 && std::memcmp(image.data(), kElf64, sizeof kElf64) == 0 &&
           read_at<uint16_t>(image, 18) == kElfMachineCuda;
}

// PTX is text up to its NUL (or the image's end) and declares its version
// and target before any code.
bool is_ptx(std::span<const uint8_t> image) {
    size_t n = 0;
    while (n < image.size() && image[n] != 0) {
        const uint8_t c = image[n++];
        if (c >= 0x7f || (c < 0x20 && c != '\n' && c != '\r' && c != '\t')) return false;
    }
    const std::string_view text(reinterpret_cast<const char*>(image.data()), n);
    const size_t version = text.find(".version"), target = text.find(".target");
    return version != std::string_view::npos && target != std::string_view::npos;
}

} // namespace

ModuleImageKind module_image_kind(std::span<const uint8_t> image) {
    if (is_fatbin(image)) return ModuleImageKind::Fatbin;
    if (is_cubin(image)) return ModuleImageKind::Cubin;
    if (is_ptx(image)) return ModuleImageKind::Ptx;
    return ModuleImageKind::Invalid;
}

} // namespace kvmgpu::vgpu
