// Pure helpers for the benchmark guests (bandwidth, calls): event times
// from cuEventElapsedTime's float bits as integer nanoseconds (exactly, with
// no rounding through a double), and comma-separated cmdline lists; also
// compiled on the host by tests/unit/bench.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "guest-stub/runtime/cmdline.h"

namespace guest {

// cuEventElapsedTime's result (binary32 milliseconds, as bits) as
// nanoseconds, rounded to nearest. False for a negative value, NaN,
// infinity, or a value past 2^64 ns. Exact: a binary32 has 24 significant
// bits, and mantissa * 10^6 fits 44 bits before the shift.
inline bool f32_ms_bits_to_ns(uint32_t bits, uint64_t* ns)
{
    const uint32_t exp = (bits >> 23) & 0xFFu, frac = bits & 0x7FFFFFu;
    if ((bits >> 31) != 0)
        return exp == 0 && frac == 0 ? (*ns = 0, true) : false; // -0 is 0
    if (exp == 0xFFu)
        return false;
    const uint64_t mant = exp == 0 ? frac : (frac | 0x800000u);
    const int shift = exp == 0 ? -149 : (int)exp - 150; // value = mant * 2^shift ms
    const uint64_t m = mant * 1000000ull;                // < 2^44
    if (shift >= 0) {
        if (m != 0 && (shift >= 64 || (m >> (64 - shift)) != 0))
            return false;
        *ns = m << shift;
        return true;
    }
    const int right = -shift;
    *ns = right >= 64 ? 0 : (m + (1ull << (right - 1))) >> right;
    return true;
}

// Walks a comma-separated list ("4K,64K,1M", "htod,dtoh"); empty items
// are skipped.
class ListCursor {
public:
    explicit ListCursor(StrView list) : s_(list) {}
    // The next item; false at the end.
    bool next(StrView* item)
    {
        while (pos_ < s_.len && s_.data[pos_] == ',')
            ++pos_;
        if (pos_ >= s_.len)
            return false;
        const size_t start = pos_;
        while (pos_ < s_.len && s_.data[pos_] != ',')
            ++pos_;
        item->data = s_.data + start;
        item->len = pos_ - start;
        return true;
    }

private:
    StrView s_;
    size_t pos_ = 0;
};

// Parses a list of sizes ("4K,64K,1M") into out[0..max); false on an
// unparsable item, a zero, more than max items, or an empty list.
inline bool parse_size_list(StrView list, uint64_t* out, unsigned max, unsigned* count)
{
    ListCursor c(list);
    StrView item;
    unsigned n = 0;
    while (c.next(&item)) {
        uint64_t v;
        if (n == max || !parse_u64(item, &v) || v == 0)
            return false;
        out[n++] = v;
    }
    *count = n;
    return n > 0;
}

// Parses a list of names from a table into a bit mask (bit i = names[i]);
// false on a name not in the table or an empty list.
inline bool parse_name_mask(StrView list, const char* const* names, unsigned n, uint32_t* mask)
{
    ListCursor c(list);
    StrView item;
    uint32_t m = 0;
    while (c.next(&item)) {
        int found = -1;
        for (unsigned i = 0; i < n && found < 0; ++i) {
            const char* s = names[i];
            size_t k = 0;
            while (k < item.len && s[k] != '\0' && s[k] == item.data[k])
                ++k;
            if (k == item.len && s[k] == '\0')
                found = (int)i;
        }
        if (found < 0)
            return false;
        m |= 1u << found;
    }
    *mask = m;
    return m != 0;
}

} // namespace guest
