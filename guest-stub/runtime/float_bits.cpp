// binary32 encode/decode with integer code only (see float_bits.h).
#include "guest-stub/runtime/float_bits.h"

namespace guest {
namespace {
constexpr uint32_t kSignBit = 0x80000000u;
constexpr int kMantBits = 23;
constexpr uint32_t kMantMask = (1u << kMantBits) - 1;
constexpr int kBias = 127;
constexpr uint32_t kExpAllOnes = 0xFF;
} // namespace

uint32_t f32_bits_from_int(int32_t v)
{
    if (v == 0)
        return 0;
    const uint32_t sign = v < 0 ? kSignBit : 0;
    const uint32_t mag = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    const int msb = 31 - __builtin_clz(mag);
    uint32_t exp = (uint32_t)(kBias + msb);
    uint32_t sig; // with the implicit leading 1 at bit 23
    if (msb <= kMantBits) {
        sig = mag << (kMantBits - msb);
    } else {
        const int shift = msb - kMantBits; // 1..8
        const uint32_t rest = mag & ((1u << shift) - 1);
        const uint32_t half = 1u << (shift - 1);
        sig = mag >> shift;
        if (rest > half || (rest == half && (sig & 1) != 0)) {
            ++sig;
            if (sig == (1u << (kMantBits + 1))) { // carried into a new bit
                sig >>= 1;
                ++exp;
            }
        }
    }
    return sign | (exp << kMantBits) | (sig & kMantMask);
}

bool f32_bits_to_int(uint32_t bits, int32_t* v)
{
    const bool negative = (bits & kSignBit) != 0;
    const uint32_t exp = (bits >> kMantBits) & kExpAllOnes;
    const uint32_t mant = bits & kMantMask;
    if (exp == 0) { // zero or subnormal
        if (mant != 0)
            return false;
        *v = 0;
        return true;
    }
    if (exp == kExpAllOnes)
        return false; // infinity or NaN
    const int e = (int)exp - kBias;
    if (e < 0)
        return false; // 0 < |x| < 1
    const uint32_t sig = mant | (1u << kMantBits);
    uint32_t mag;
    if (e <= kMantBits) {
        const int frac_bits = kMantBits - e;
        if ((sig & ((1u << frac_bits) - 1)) != 0)
            return false;
        mag = sig >> frac_bits;
    } else if (e <= 30) {
        mag = sig << (e - kMantBits);
    } else if (e == 31 && negative && mant == 0) {
        *v = INT32_MIN;
        return true;
    } else {
        return false;
    }
    *v = negative ? -(int32_t)mag : (int32_t)mag;
    return true;
}

} // namespace guest
