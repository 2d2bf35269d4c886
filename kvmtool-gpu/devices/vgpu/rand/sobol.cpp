#include "kvmtool-gpu/devices/vgpu/rand/sobol.h"

#include <cmath>
#include <cstring>

#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/devices/vgpu/rand/curand_tables.h"

namespace kvmgpu::vgpu {

Sobol::Sobol(uint32_t type) {
    // 200 (QUASI_DEFAULT) is SOBOL32; 202 and 204 are the scrambled ones.
    wide_ = type == 203 || type == 204;
    const bool scrambled = type == 202 || type == 204;
    vectors_ = curand_table(wide_ ? (scrambled ? 104 : 103) : (scrambled ? 102 : 101));
    if (scrambled) {
        constants_ = curand_table(wide_ ? VGPU_RAND_TABLE_SCRAMBLE_64 : VGPU_RAND_TABLE_SCRAMBLE_32);
        if (constants_.empty()) vectors_ = {};
    }
}

uint64_t Sobol::value(uint32_t dim, uint64_t index) const {
    if (!valid() || dim >= VGPU_RAND_MAX_DIMENSIONS) return 0;
    const unsigned bits = wide_ ? 64 : 32, word = wide_ ? 8 : 4;
    const uint8_t* v = vectors_.data() + uint64_t(dim) * bits * word;
    uint64_t x = 0;
    if (!constants_.empty()) std::memcpy(&x, constants_.data() + uint64_t(dim) * word, word);
    const uint64_t gray = index ^ (index >> 1);
    for (unsigned k = 0; k < bits; ++k) {
        if (!(gray >> k & 1)) continue;
        uint64_t vk = 0;
        std::memcpy(&vk, v + k * word, word);
        x ^= vk;
    }
    return x;
}

float Sobol::uniform(uint64_t x) const {
    const uint32_t hi = static_cast<uint32_t>(wide_ ? x >> 32 : x);
    return static_cast<float>(hi) * 0x1p-32f + 0x1p-33f;
}

double Sobol::uniform_double(uint64_t x) const {
    return wide_ ? static_cast<double>(x >> 11) * 0x1p-53 + 0x1p-54 : static_cast<double>(x) * 0x1p-32 + 0x1p-32;
}

double Sobol::normal_uniform(uint64_t x) const {
    return wide_ ? static_cast<double>(x >> 11) * 0x1p-53 + 0x1p-54 : static_cast<double>(x) * 0x1p-32 + 0x1p-33;
}

double normal_quantile(double p) {
    if (!(p > 0 && p < 1)) return p == 0 ? -INFINITY : p == 1 ? INFINITY : NAN;
    // A start to ~3e-3 (Abramowitz and Stegun 26.2.23), then Halley steps on
    // Phi(x) - p, Phi by erfc, which converge cubically to double precision.
    const double q = p < 0.5 ? p : 1 - p, t = std::sqrt(-2 * std::log(q));
    double x = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
    if (p < 0.5) x = -x;
    for (int i = 0; i < 3; ++i) {
        const double err = 0.5 * std::erfc(-x / M_SQRT2) - p;
        const double u = err * std::sqrt(2 * M_PI) * std::exp(x * x / 2); // err / phi(x)
        x -= u / (1 + x * u / 2);
    }
    return x;
}

} // namespace kvmgpu::vgpu
