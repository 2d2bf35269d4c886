// printf-style formatting with no libc: the subset the guests need.
// Conversions: %d %i %u %x %X %o %p %s %c %% %f %F %e %E %g %G; length
// modifiers h hh l ll z j t; flags - 0 + space #; width and precision, both
// also as '*'. Floats are formatted from the double's value (not exactly as
// glibc for halfway cases: we round half away from zero on the scaled value).
// Pure code: also compiled on the host for the unit tests.
#pragma once

#include <stdarg.h>
#include <stddef.h>

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

} // namespace guest
