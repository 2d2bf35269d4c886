// a * b / d through a 128-bit product, for timings and decimals. Written with
// one divq instead of a 128-bit C++ division, which would call libgcc's
// general __udivti3 for a case one instruction covers. x86-64 only; pure,
// so also compiled on the host for the unit tests.
#pragma once

#include <stdint.h>

namespace guest {

// floor(a * b / d), and the remainder in *rem when rem is not null. When the
// quotient does not fit 64 bits (d == 0 included), returns UINT64_MAX and a
// remainder of 0.
inline uint64_t mul_div_u64(uint64_t a, uint64_t b, uint64_t d, uint64_t* rem = nullptr)
{
    const unsigned __int128 p = (unsigned __int128)a * b;
    const uint64_t hi = (uint64_t)(p >> 64), lo = (uint64_t)p;
    uint64_t q = UINT64_MAX, r = 0;
    if (hi < d) // quotient fits: divq cannot fault
        asm("divq %4" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), "rm"(d) : "cc");
    if (rem != nullptr)
        *rem = r;
    return q;
}

} // namespace guest
