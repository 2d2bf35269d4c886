// guest::f32_bits_from_int / f32_bits_to_int against the host's own float
// conversions (the host tests may use floating point; guest code may not).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "guest-stub/runtime/float_bits.h"

namespace {

uint32_t host_bits(int32_t v) { return std::bit_cast<uint32_t>(static_cast<float>(v)); }

// What f32_bits_to_int must answer, computed with host floats.
bool host_to_int(uint32_t bits, int32_t* v)
{
    const float f = std::bit_cast<float>(bits);
    if (!std::isfinite(f) || f != std::trunc(f) || f < -2147483648.0f || f >= 2147483648.0f)
        return false;
    *v = static_cast<int32_t>(f);
    return true;
}

void expect_decode_like_host(uint32_t bits)
{
    int32_t got = 12345, want = 12345;
    const bool ok = guest::f32_bits_to_int(bits, &got);
    ASSERT_EQ(ok, host_to_int(bits, &want)) << std::hex << "bits 0x" << bits;
    if (ok) {
        ASSERT_EQ(got, want) << std::hex << "bits 0x" << bits;
    }
}

TEST(GuestFloatBits, EncodesEveryExactIntegerLikeTheHost)
{
    for (int32_t v = -guest::kF32ExactIntLimit - 4096; v <= guest::kF32ExactIntLimit + 4096; ++v)
        ASSERT_EQ(guest::f32_bits_from_int(v), host_bits(v)) << "v = " << v;
}

TEST(GuestFloatBits, RoundsLargeIntegersToNearestEven)
{
    const int32_t edges[] = {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                             (1 << 24) + 1, (1 << 24) + 3, (1 << 25) + 2, (1 << 25) + 6,
                             0x7FFFFFC0, 0x7FFFFF80, -((1 << 24) + 1), -((1 << 24) + 3)};
    for (int32_t v : edges)
        EXPECT_EQ(guest::f32_bits_from_int(v), host_bits(v)) << "v = " << v;
    std::mt19937_64 rng(1);
    for (int i = 0; i < 2000000; ++i) {
        const auto v = static_cast<int32_t>(rng());
        ASSERT_EQ(guest::f32_bits_from_int(v), host_bits(v)) << "v = " << v;
    }
}

TEST(GuestFloatBits, DecodesIntegersItEncodes)
{
    for (int32_t v = -(1 << 21); v <= (1 << 21); ++v) {
        int32_t got = 0;
        ASSERT_TRUE(guest::f32_bits_to_int(guest::f32_bits_from_int(v), &got)) << "v = " << v;
        ASSERT_EQ(got, v);
    }
}

TEST(GuestFloatBits, DecodesLikeTheHost)
{
    const float specials[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -2.25f, 1e-40f, -1e-45f, 8388607.5f,
                              16777216.0f, 2147483520.0f, 2147483648.0f, -2147483648.0f,
                              -2147483904.0f, 3e38f, std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN()};
    for (float f : specials)
        expect_decode_like_host(std::bit_cast<uint32_t>(f));
    std::mt19937 rng(2);
    for (int i = 0; i < 4000000; ++i)
        expect_decode_like_host(static_cast<uint32_t>(rng()));
    // Integral values of every exponent, and their neighbours (fractions).
    for (uint32_t exp = 120; exp <= 160; ++exp) {
        for (uint32_t m = 0; m < 4096; ++m) {
            for (uint32_t sign : {0u, 0x80000000u}) {
                const uint32_t base = sign | (exp << 23);
                expect_decode_like_host(base | m);
                expect_decode_like_host(base | (0x7FFFFFu - m));
            }
        }
    }
}

TEST(GuestFloatBits, NegativeZeroIsZero)
{
    int32_t v = 7;
    EXPECT_TRUE(guest::f32_bits_to_int(0x80000000u, &v));
    EXPECT_EQ(v, 0);
    EXPECT_EQ(guest::f32_bits_from_int(0), 0u);
}

} // namespace
