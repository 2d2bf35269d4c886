#include "kvmtool-gpu/devices/vgpu/backends/fft_library.h"

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

uint64_t FftShape::side_element_bytes(bool input) const {
    const uint64_t real = double_precision() ? 8 : 4;
    return (input ? real_input() : real_output()) ? real : 2 * real;
}

uint64_t FftShape::side_size(bool input, uint32_t d) const {
    const bool half = d == rank - 1 && (input ? real_output() : real_input()); // the complex side of R2C/C2R
    return half ? n[d] / 2 + 1 : n[d];
}

// Without overflow for a shape from from() (dense) or many() (checked there).
uint64_t FftShape::side_span(bool input) const {
    if (!advanced) {
        uint64_t e = batch;
        for (uint32_t d = 0; d < rank; ++d) e *= side_size(input, d);
        return e;
    }
    const Layout& l = input ? in : out;
    uint64_t last = 0; // the offset of the last element of one member, in strides
    for (uint32_t d = 0; d < rank; ++d) last = (d ? last * l.embed[d] : 0) + side_size(input, d) - 1;
    return (batch - 1) * l.dist + last * l.stride + 1;
}

std::optional<FftShape> FftShape::many(const uint64_t n[3], uint64_t rank, uint64_t type, uint64_t batch,
                                       bool advanced, const Layout& in, const Layout& out) {
    auto s = from(rank, n, type, batch);
    if (!s || !advanced) return s;
    constexpr uint64_t kMax = uint64_t{INT64_MAX};
    s->advanced = true;
    for (int side = 0; side < 2; ++side) {
        const Layout& l = side == 0 ? in : out;
        if (l.stride < 1 || l.stride > kMax || l.dist > kMax) return std::nullopt;
        uint64_t last = 0;
        for (uint32_t d = 0; d < s->rank; ++d) {
            if (d && (l.embed[d] < s->side_size(side == 0, d) || l.embed[d] > kMax)) return std::nullopt;
            if (d && __builtin_mul_overflow(last, l.embed[d], &last)) return std::nullopt;
            if (__builtin_add_overflow(last, s->side_size(side == 0, d) - 1, &last)) return std::nullopt;
        }
        uint64_t a = 0, b = 0, span = 0;
        if (__builtin_mul_overflow(s->batch - 1, l.dist, &a) || __builtin_mul_overflow(last, l.stride, &b) ||
            __builtin_add_overflow(a, b, &span) || __builtin_add_overflow(span, 1, &span) ||
            __builtin_mul_overflow(span, s->side_element_bytes(side == 0), &span))
            return std::nullopt;
        (side == 0 ? s->in : s->out) = l;
    }
    return s;
}

uint64_t FftShape::input_bytes() const { return side_span(true) * side_element_bytes(true); }
uint64_t FftShape::output_bytes() const { return side_span(false) * side_element_bytes(false); }

} // namespace kvmgpu::vgpu
