// guest::vformat against the host's snprintf on the conversions guests use.
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
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

TEST(GuestFormat, FixedPoint)
{
    EXPECT_LIKE_LIBC("%f %f %f", 0.0, 1.0, -1.5);
    EXPECT_LIKE_LIBC("%.2f %.3f %.1f", 3.14159, 2.71828, 9.96);
    EXPECT_LIKE_LIBC("%.0f %.0f %#.0f", 2.4, 2.6, 3.0);
    EXPECT_LIKE_LIBC("%.2f GB/s", 54.98765);
    EXPECT_LIKE_LIBC("%10.3f|%-10.3f|%010.3f|%+.2f", 3.14159, 3.14159, -3.14159, 2.5);
    EXPECT_LIKE_LIBC("%.6f", 1e-7);
    EXPECT_LIKE_LIBC("%.9f", 0.123456789012);
    EXPECT_LIKE_LIBC("%.3f", 999.9996);   // carry into the integer part
    EXPECT_LIKE_LIBC("%.2f", 0.996);      // carry to 1.00
    EXPECT_LIKE_LIBC("%f", 123456789012345.678);
    EXPECT_LIKE_LIBC("%.1f", 5.5e10);    // bytes/s scale
    EXPECT_LIKE_LIBC("%.2f", 1.0 / 3.0);
    EXPECT_LIKE_LIBC("%.20f", 0.5);      // beyond 17 digits: zeros
    EXPECT_LIKE_LIBC("%f", (double)1.25f);
    EXPECT_LIKE_LIBC("%.3f", -0.0);
}

TEST(GuestFormat, ExponentAndGeneral)
{
    EXPECT_LIKE_LIBC("%e %e %e", 1.0, 12345.678, 0.000123);
    EXPECT_LIKE_LIBC("%.2e %.0e %E", 9.999, 5e300, 6.02214076e23);
    EXPECT_LIKE_LIBC("%e", 0.0);
    EXPECT_LIKE_LIBC("%.3e", 1e-300);
    EXPECT_LIKE_LIBC("%g %g %g %g", 100000.0, 1000000.0, 0.0001, 0.00001);
    EXPECT_LIKE_LIBC("%g %g %.3g %G", 3.14159, 1e-10, 2.5e9, 1e20);
    EXPECT_LIKE_LIBC("%g %g", 0.0, 1.5);
    EXPECT_LIKE_LIBC("%#g", 1.5);
}

TEST(GuestFormat, NonFinite)
{
    EXPECT_LIKE_LIBC("%f %F %e", __builtin_inf(), -__builtin_inf(), __builtin_inf());
    EXPECT_LIKE_LIBC("[%6f] [%-6f|]", __builtin_inf(), -__builtin_inf());
    EXPECT_EQ(guest_fmt("%f", __builtin_nan("")), "nan");
}

TEST(GuestFormat, ExactHalfwayRoundsAwayFromZero)
{
    // Documented difference from glibc (which rounds exact ties to even).
    EXPECT_EQ(guest_fmt("%.1f %.0f %.2f", 2.25, 0.5, -1.125), "2.3 1 -1.13");
}

TEST(GuestFormat, HugeFixedFallsBackToExponent)
{
    EXPECT_EQ(guest_fmt("%.2f", 1e20), "1.00e+20");
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
    size_t n = guest::format(sink, "x=%d y=%.1f %s\n", 7, 2.75, "end");
    EXPECT_EQ(got, "x=7 y=2.8 end\n");
    EXPECT_EQ(n, got.size());
}

} // namespace
