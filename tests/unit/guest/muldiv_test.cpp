// guest::mul_div_u64 (one divq) against 128-bit C++ arithmetic on the host.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "guest-stub/runtime/muldiv.h"

namespace {

void expect_like_u128(uint64_t a, uint64_t b, uint64_t d)
{
    uint64_t rem = 1;
    const uint64_t q = guest::mul_div_u64(a, b, d, &rem);
    const unsigned __int128 p = (unsigned __int128)a * b;
    if (d == 0 || p / d > UINT64_MAX) {
        ASSERT_EQ(q, UINT64_MAX) << a << " * " << b << " / " << d;
        ASSERT_EQ(rem, 0u);
        return;
    }
    ASSERT_EQ(q, (uint64_t)(p / d)) << a << " * " << b << " / " << d;
    ASSERT_EQ(rem, (uint64_t)(p % d)) << a << " * " << b << " % " << d;
}

TEST(GuestMulDiv, TscConversions)
{
    EXPECT_EQ(guest::mul_div_u64(3000000, 1000000, 3000000), 1000000u); // 1 ms at 3 GHz in ns
    EXPECT_EQ(guest::mul_div_u64(UINT64_MAX, 1000000, 2400000), 7686143364045646506u);
    EXPECT_EQ(guest::mul_div_u64(30, 2400000, 1), 72000000u);
    EXPECT_EQ(guest::mul_div_u64(UINT64_MAX, 2, 1), UINT64_MAX); // saturates
    EXPECT_EQ(guest::mul_div_u64(5, 7, 0), UINT64_MAX);
}

TEST(GuestMulDiv, MatchesU128)
{
    const uint64_t edges[] = {0, 1, 2, 3, 10, 999, 1000000, 0xFFFFFFFFull, 0x100000000ull,
                              UINT64_MAX / 2, UINT64_MAX - 1, UINT64_MAX};
    for (uint64_t a : edges)
        for (uint64_t b : edges)
            for (uint64_t d : edges)
                expect_like_u128(a, b, d);
    std::mt19937_64 rng(4);
    for (int i = 0; i < 1000000; ++i) {
        const uint64_t a = rng() >> (rng() % 64), b = rng() >> (rng() % 64), d = rng() >> (rng() % 64);
        expect_like_u128(a, b, d);
    }
}

} // namespace
