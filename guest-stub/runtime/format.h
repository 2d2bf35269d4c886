// printf-style formatting with no libc: the subset the guests need.
// Conversions: %d %i %u %x %X %o %p %s %c %f %F %e %E %g %G %%; length
// modifiers h hh l ll z j t; flags - 0 + space #; width and precision, both
// also as '*' (floats: precision at most 17). Unknown conversions (%a, %Lf,
// %n) are printed as written.
// Pure code: also compiled on the host for the unit tests.
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

namespace guest {

// Where formatted bytes go: called with runs of bytes, in order.
struct FormatSink {
    void (*write)(void* ctx, const char* data, size_t len);
    void* ctx;
};

// Formats into the sink; returns the number of bytes produced.
size_t vformat(FormatSink sink, const char* fmt, va_list ap);
size_t format(FormatSink sink, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// snprintf semantics: always NUL-terminates when size > 0; returns the
// length the full output would have had.
size_t vsnformat(char* buf, size_t size, const char* fmt, va_list ap);
size_t snformat(char* buf, size_t size, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// A decimal number as text, for printf's %s.
struct DecimalText {
    char text[48];
};

constexpr unsigned kMaxDecimalDigits = 18;

// num / den with `digits` fraction digits (at most kMaxDecimalDigits),
// rounded half up, from integers only: decimal_ratio(1234567, 1000000, 3) is
// "1.235". den == 0 gives "-". For timings and rates: ms from ns is
// (ns, 1000000, 3); GB/s from bytes and ns is (bytes, ns, 2).
DecimalText decimal_ratio(uint64_t num, uint64_t den, unsigned digits);

} // namespace guest
