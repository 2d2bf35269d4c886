#include "kvmtool-gpu/devices/vgpu/fft/fft_library.h"

namespace kvmgpu::vgpu {

std::optional<FftShape> FftShape::from(uint64_t rank, const uint64_t n[3], uint64_t type, uint64_t batch) {
    if (rank < 1 || rank > 3 || batch < 1 || batch > kFftMaxElements) return std::nullopt;
    FftShape s;
    s.rank = static_cast<uint32_t>(rank);
    switch (static_cast<FftType>(type)) {
    case FftType::R2C:
    case FftType::C2R:
    case FftType::C2C:
    case FftType::D2Z:
    case FftType::Z2D:
    case FftType::Z2Z: s.type = static_cast<FftType>(type); break;
    default: return std::nullopt;
    }
    uint64_t total = batch;
    for (uint32_t i = 0; i < s.rank; ++i) {
        if (n[i] < 1 || n[i] > kFftMaxElements) return std::nullopt;
        s.n[i] = n[i];
        if (__builtin_mul_overflow(total, n[i], &total) || total > kFftMaxElements) return std::nullopt;
    }
    s.batch = batch;
    return s;
}

uint64_t FftShape::elements() const {
    uint64_t e = 1;
    for (uint32_t i = 0; i < rank; ++i) e *= n[i];
    return e;
}

namespace {
// Bytes of a real element and of a complex one.
uint64_t real_bytes(const FftShape& s) { return s.double_precision() ? 8 : 4; }
// Complex elements of one member's half spectrum: the last dimension n/2 + 1.
uint64_t half_spectrum(const FftShape& s) { return s.elements() / s.last() * (s.last() / 2 + 1); }
} // namespace

uint64_t FftShape::input_bytes() const {
    if (real_input()) return elements() * batch * real_bytes(*this);
    return (real_output() ? half_spectrum(*this) : elements()) * batch * 2 * real_bytes(*this);
}

uint64_t FftShape::output_bytes() const {
    if (real_output()) return elements() * batch * real_bytes(*this);
    return (real_input() ? half_spectrum(*this) : elements()) * batch * 2 * real_bytes(*this);
}

} // namespace kvmgpu::vgpu
