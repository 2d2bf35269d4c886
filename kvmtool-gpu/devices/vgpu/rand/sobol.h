// A CPU Sobol sequence with cuRAND's conventions (checked against the
// host's libcurand in tests/unit/vgpu/vgpu_rand_quasi_test.cpp): point i
// of a dimension is the XOR of the direction vectors picked by the bits of
// i's Gray code (i ^ i >> 1), starting from the dimension's scramble
// constant (0 unscrambled); uniform floats are x * 2^-32 + 2^-33 (64-bit
// generators: of x's high 32 bits), uniform doubles x * 2^-32 + 2^-32 or
// (x >> 11) * 2^-53 + 2^-54 (curand_uniform.h's conversions); normals are
// mean + stddev * the normal quantile of normal_uniform(x), log-normals their exp. The host backend's quasi-random
// generators run on it.
#pragma once

#include <cstdint>
#include <span>

namespace kvmgpu::vgpu {

class Sobol {
public:
    // `type`: curandRngType_t 200..204. Valid when the host has cuRAND's
    // tables (curand_tables.h); else every value is 0 and valid() false.
    explicit Sobol(uint32_t type);
    bool valid() const { return !vectors_.empty(); }
    bool wide() const { return wide_; } // 64-bit (SOBOL64, SCRAMBLED_SOBOL64)
    // The point of `index` in dimension `dim` (< VGPU_RAND_MAX_DIMENSIONS).
    uint64_t value(uint32_t dim, uint64_t index) const;
    float uniform(uint64_t x) const;
    double uniform_double(uint64_t x) const;
    // The uniform a normal is the quantile of: x * 2^-32 + 2^-33, or
    // (x >> 11) * 2^-53 + 2^-54 (curand_normal.h's inverse-CDF method).
    double normal_uniform(uint64_t x) const;

private:
    bool wide_ = false;
    std::span<const uint8_t> vectors_, constants_; // constants_ empty: unscrambled
};

// The standard normal quantile (inverse CDF) of p in (0, 1), to double precision.
double normal_quantile(double p);

} // namespace kvmgpu::vgpu
