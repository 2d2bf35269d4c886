// guest::vformat against the host's snprintf on the conversions guests use;
// guest::decimal_ratio against hand-worked values and the host's %Lf.
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

#include "guest-stub/runtime/format.h"

namespace {

std::string guest_fmt(const char* fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    guest::vsnformat(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

std::string host_fmt(const char* fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

#define EXPECT_LIKE_LIBC(...) EXPECT_EQ(guest_fmt(__VA_ARGS__), host_fmt(__VA_ARGS__))

TEST(GuestFormat, Integers)
{
    EXPECT_LIKE_LIBC("%d %d %d", 0, -1, 2147483647);
    EXPECT_LIKE_LIBC("%d", (int)-2147483647 - 1);
    EXPECT_LIKE_LIBC("%u %x %X %o", 4000000000u, 0xdeadbeefu, 0xabcu, 8u);
    EXPECT_LIKE_LIBC("%ld %lu %lx", -5L, 18446744073709551615UL, 0x123456789abcdefUL);
    EXPECT_LIKE_LIBC("%lld %llu", -9223372036854775807LL - 1, 12345678901234567890ULL);
    EXPECT_LIKE_LIBC("%zu %zd", (size_t)42, (ssize_t)-42);
    EXPECT_LIKE_LIBC("%hd %hhu", (int)70000, 300);
    EXPECT_LIKE_LIBC("[%5d] [%-5d] [%05d] [%+d] [% d]", 42, 42, 42, 42, 42);
    EXPECT_LIKE_LIBC("[%05d] [%+05d] [%.3d] [%8.3d] [%-8.3d|]", -42, 42, 7, -7, 7);
    EXPECT_LIKE_LIBC("[%#x] [%#X] [%#o] [%#x]", 255u, 255u, 8u, 0u);
    EXPECT_LIKE_LIBC("[%08lx] [%*d] [%-*d] [%.*d]", 0xbeefUL, 6, 1, 6, 2, 4, 3);
    EXPECT_LIKE_LIBC("[%.0d] [%5.0d]", 0, 0);
}

TEST(GuestFormat, StringsCharsPointers)
{
    EXPECT_LIKE_LIBC("[%s] [%10s] [%-10s] [%.3s] [%c%c] [%%]", "abc", "right", "left", "truncate",
                     'o', 'k');
    EXPECT_LIKE_LIBC("[%5c] [%-5c]", 'x', 'y');
    EXPECT_LIKE_LIBC("%p", (void*)0x1234abcd);
    EXPECT_EQ(guest_fmt("%s", (const char*)nullptr), "(null)");
    EXPECT_EQ(guest_fmt("%p", (void*)nullptr), "0x0");
}

TEST(GuestFormat, FloatsLikeLibc)
{
    EXPECT_LIKE_LIBC("%f %f %f %f", 0.0, 1.5, -2.25, 123456.789);
    EXPECT_LIKE_LIBC("[%.2f] [%.0f] [%#.0f] [%10.3f] [%-10.1f] [%+f] [% f] [%010.2f]", 3.14159, 2.4, 7.0, -1.5,
                     0.25, 1.0, 1.0, -3.5);
    EXPECT_LIKE_LIBC("%e %E %.3e %.0e", 12345.678, 0.000123, -6.02e23, 5e-7);
    EXPECT_LIKE_LIBC("%g %g %g %g %g %G", 100000.0, 1000000.0, 0.0001, 0.00001, 1.25, 3e-10);
    EXPECT_LIKE_LIBC("%g %.3g %#g %.10g", 0.0, 3.14159, 2.0, 1.0 / 3);
    EXPECT_LIKE_LIBC("%f %F %e %g", __builtin_inf(), -__builtin_inf(), __builtin_nan(""), -0.0);
    EXPECT_LIKE_LIBC("%.1f %lf %*.*f", 0.05f * 3, 2.5, 8, 2, 9.999);
    EXPECT_LIKE_LIBC("%f %e", 1e17, 1e300);
    EXPECT_EQ(guest_fmt("%f", 1e19), "1.000000e+19"); // integer part beyond a u64
    EXPECT_EQ(guest_fmt("%Lf|%s", "x"), "%Lf|x");
}

TEST(GuestFormat, FloatsMatchLibcOnRandomValues)
{
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> mant(1.0, 10.0);
    std::uniform_int_distribution<int> exp10(-8, 12);
    for (int i = 0; i < 2000; ++i) {
        double v = mant(rng);
        for (int e = exp10(rng); e > 0; --e) v *= 10;
        for (int e = exp10(rng); e < 0; ++e) v /= 10;
        EXPECT_LIKE_LIBC("%.4e", v);
        EXPECT_LIKE_LIBC("%.5g", v);
        if (v < 1e12) EXPECT_LIKE_LIBC("%.3f", v);
    }
}

std::string ratio(uint64_t num, uint64_t den, unsigned digits)
{
    return guest::decimal_ratio(num, den, digits).text;
}

TEST(GuestDecimalRatio, TimingsAndRates)
{
    EXPECT_EQ(ratio(1234567, 1000000, 3), "1.235");     // ns -> ms
    EXPECT_EQ(ratio(999, 1000000, 3), "0.001");
    EXPECT_EQ(ratio(499, 1000000, 3), "0.000");
    EXPECT_EQ(ratio(500, 1000000, 3), "0.001");         // half rounds up
    EXPECT_EQ(ratio(999999500, 1000000, 3), "1000.000"); // carry into the whole part
    EXPECT_EQ(ratio(8u << 20, 123456, 2), "67.95");     // bytes / ns = GB/s
    EXPECT_EQ(ratio(0, 7, 2), "0.00");
    EXPECT_EQ(ratio(7, 7, 0), "1");
    EXPECT_EQ(ratio(3, 2, 0), "2");
    EXPECT_EQ(ratio(1, 3, 5), "0.33333");
    EXPECT_EQ(ratio(2, 3, 5), "0.66667");
    EXPECT_EQ(ratio(5, 0, 2), "-");
}

TEST(GuestDecimalRatio, ExtremesNeedNoFloatingPoint)
{
    EXPECT_EQ(ratio(UINT64_MAX, 1, 3), "18446744073709551615.000");
    EXPECT_EQ(ratio(UINT64_MAX, UINT64_MAX, 18), "1.000000000000000000");
    EXPECT_EQ(ratio(UINT64_MAX - 1, UINT64_MAX, 18), "1.000000000000000000");
    EXPECT_EQ(ratio(1, UINT64_MAX, 18), "0.000000000000000000");
    EXPECT_EQ(ratio(UINT64_MAX / 3, UINT64_MAX, 18), "0.333333333333333333");
    EXPECT_EQ(ratio(1, 3, 40), "0.333333333333333333"); // digits clamped to 18
    EXPECT_EQ(ratio(1, 8, 18), "0.125000000000000000");
}

TEST(GuestDecimalRatio, MatchesLibcOnRandomRatios)
{
    // Exact ties are skipped: glibc rounds them to even, we round half up.
    // With num < 2^32 and <= 6 digits, long double division is far more
    // precise than the distance of any non-tie from a rounding boundary.
    std::mt19937_64 rng(3);
    for (int i = 0; i < 200000; ++i) {
        const uint64_t num = rng() >> 32;
        const uint64_t den = (rng() >> (34 + rng() % 30)) + 1;
        const unsigned digits = static_cast<unsigned>(rng() % 7);
        uint64_t scale = 1;
        for (unsigned k = 0; k < digits; ++k)
            scale *= 10;
        if ((unsigned __int128)num * scale % den * 2 == den)
            continue;
        char want[64];
        snprintf(want, sizeof want, "%.*Lf", static_cast<int>(digits),
                 static_cast<long double>(num) / static_cast<long double>(den));
        ASSERT_EQ(ratio(num, den, digits), want) << num << " / " << den << ", " << digits << " digits";
    }
}

TEST(GuestFormat, TruncationAndReturnValue)
{
    char buf[8];
    size_t n = guest::snformat(buf, sizeof buf, "%s", "0123456789");
    EXPECT_EQ(n, 10u);
    EXPECT_STREQ(buf, "0123456");
    EXPECT_EQ(guest::snformat(nullptr, 0, "%d", 12345), 5u);
}

TEST(GuestFormat, UnknownConversionPrintedVerbatim)
{
    EXPECT_EQ(guest_fmt("%q %d", 5), "%q 5");
    EXPECT_EQ(guest_fmt("trailing %"), "trailing %");
}

TEST(GuestFormat, SinkSeesEveryByte)
{
    std::string got;
    guest::FormatSink sink{[](void* ctx, const char* d, size_t n) {
                               static_cast<std::string*>(ctx)->append(d, n);
                           },
                           &got};
    size_t n = guest::format(sink, "x=%d y=%s %s\n", 7, guest::decimal_ratio(11, 4, 1).text, "end");
    EXPECT_EQ(got, "x=7 y=2.8 end\n");
    EXPECT_EQ(n, got.size());
}

} // namespace
