// Sorting the few timings a guest program repeats (tens at most): an
// insertion sort in place, and the median it gives.
#pragma once

#include <stdint.h>

namespace guest {

inline void sort_u64(uint64_t* a, uint64_t n)
{
    for (uint64_t i = 1; i < n; ++i)
        for (uint64_t j = i; j > 0 && a[j - 1] > a[j]; --j) {
            const uint64_t t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
}

// The middle one of n >= 1 values (the upper middle for even n); sorts a.
inline uint64_t median_u64(uint64_t* a, uint64_t n)
{
    sort_u64(a, n);
    return a[n / 2];
}

} // namespace guest
