// The rest of <stdlib.h> that test programs use: rand/srand, number parsing
// (atoi, strtol & co., which set errno to ERANGE on overflow), abs, getenv
// (the guest has no environment) and qsort; and errno itself (one thread:
// one int).
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

namespace {

constinit int g_errno = 0;

// rand(): a 64-bit linear congruential generator (Knuth's MMIX constants),
// its top 31 bits returned, so values span [0, RAND_MAX] = [0, 2^31 - 1] as
// glibc's do. Deterministic: seed 1 until srand, as C specifies.
constinit uint64_t g_rand_state = 1;

bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

int digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    return 99;
}

// strtoull's core: magnitude in *out (saturated at UINT64_MAX), sign in *neg;
// returns the end of what was parsed (s itself when no digits).
const char* parse_unsigned(const char* s, int base, bool* neg, uint64_t* out, bool* overflow)
{
    const char* start = s;
    *neg = false;
    *overflow = false;
    *out = 0;
    while (is_space(*s))
        ++s;
    if (*s == '+' || *s == '-')
        *neg = *s++ == '-';
    if ((base == 0 || base == 16) && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && digit_value(s[2]) < 16) {
        s += 2;
        base = 16;
    } else if (base == 0) {
        base = s[0] == '0' ? 8 : 10;
    }
    if (base < 2 || base > 36) {
        g_errno = EINVAL;
        return start;
    }
    const char* digits = s;
    for (int d; (d = digit_value(*s)) < base; ++s) {
        if (__builtin_mul_overflow(*out, (uint64_t)base, out) || __builtin_add_overflow(*out, (uint64_t)d, out)) {
            *overflow = true;
            *out = UINT64_MAX;
        }
    }
    return s == digits ? start : s;
}

int64_t to_signed(bool neg, uint64_t mag, int64_t lo, int64_t hi)
{
    if (neg ? mag > (uint64_t)hi + 1 : mag > (uint64_t)hi) {
        g_errno = ERANGE;
        return neg ? lo : hi;
    }
    return neg ? (int64_t)(0 - mag) : (int64_t)mag;
}

void swap_bytes(char* a, char* b, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        char t = a[i];
        a[i] = b[i];
        b[i] = t;
    }
}

} // namespace

extern "C" {

int* __errno_location(void) noexcept { return &g_errno; }

int rand(void) noexcept
{
    g_rand_state = g_rand_state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>(g_rand_state >> 33);
}

void srand(unsigned seed) noexcept { g_rand_state = seed; }

long long strtoll(const char* s, char** end, int base) noexcept
{
    bool neg, overflow;
    uint64_t mag;
    const char* e = parse_unsigned(s, base, &neg, &mag, &overflow);
    if (end != nullptr)
        *end = const_cast<char*>(e);
    return to_signed(neg, mag, INT64_MIN, INT64_MAX);
}

long strtol(const char* s, char** end, int base) noexcept { return (long)strtoll(s, end, base); } // long is 64-bit

unsigned long long strtoull(const char* s, char** end, int base) noexcept
{
    bool neg, overflow;
    uint64_t mag;
    const char* e = parse_unsigned(s, base, &neg, &mag, &overflow);
    if (end != nullptr)
        *end = const_cast<char*>(e);
    if (overflow) {
        g_errno = ERANGE;
        return UINT64_MAX;
    }
    return neg ? 0 - mag : mag;
}

unsigned long strtoul(const char* s, char** end, int base) noexcept { return strtoull(s, end, base); }

int atoi(const char* s) noexcept
{
    bool neg, overflow;
    uint64_t mag;
    parse_unsigned(s, 10, &neg, &mag, &overflow);
    return (int)to_signed(neg, mag, INT32_MIN, INT32_MAX);
}

long atol(const char* s) noexcept { return strtol(s, nullptr, 10); }
long long atoll(const char* s) noexcept { return strtoll(s, nullptr, 10); }

int abs(int x) noexcept { return x < 0 ? -x : x; }
long labs(long x) noexcept { return x < 0 ? -x : x; }
long long llabs(long long x) noexcept { return x < 0 ? -x : x; }

char* getenv(const char*) noexcept { return nullptr; }

// Heapsort: no recursion, no extra memory, O(n log n) in every case.
void qsort(void* base, size_t count, size_t size, int (*cmp)(const void*, const void*))
{
    char* a = static_cast<char*>(base);
    auto sift = [&](size_t root, size_t n) {
        for (size_t child; (child = 2 * root + 1) < n; root = child) {
            if (child + 1 < n && cmp(a + child * size, a + (child + 1) * size) < 0)
                ++child;
            if (cmp(a + root * size, a + child * size) >= 0)
                return;
            swap_bytes(a + root * size, a + child * size, size);
        }
    };
    if (count < 2 || size == 0)
        return;
    for (size_t i = count / 2; i-- > 0;)
        sift(i, count);
    for (size_t n = count - 1; n > 0; --n) {
        swap_bytes(a, a + n * size, size);
        sift(0, n);
    }
}

} // extern "C"
