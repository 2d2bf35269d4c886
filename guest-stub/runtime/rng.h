// xorshift64* : a small, fast PRNG for shuffles and test patterns (not for
// anything that needs real randomness). Pure, header-only.
#pragma once

#include <stdint.h>

namespace guest {

class XorShift64 {
public:
    constexpr explicit XorShift64(uint64_t seed) : state_(seed != 0 ? seed : 0x9E3779B97F4A7C15ull) {}
    uint64_t next()
    {
        state_ ^= state_ >> 12;
        state_ ^= state_ << 25;
        state_ ^= state_ >> 27;
        return state_ * 0x2545F4914F6CDD1Dull;
    }
    // Uniform in [0, bound), bound > 0 (Lemire's multiply-shift; the tiny
    // bias is irrelevant for shuffles).
    uint64_t below(uint64_t bound)
    {
        return (uint64_t)(((unsigned __int128)next() * bound) >> 64);
    }

private:
    uint64_t state_;
};

} // namespace guest
