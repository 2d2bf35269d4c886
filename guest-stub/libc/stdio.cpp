// <stdio.h> output for guest programs: the printf family, puts/putchar,
// fputs/fputc/fwrite and fflush, on the runtime's console (format.h's
// formatter, console.h's line buffer). stdout and stderr both go to the
// console; stdin has no input (reads return EOF). Any other FILE* is
// refused (EOF / -1): the guest has no files.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "guest-stub/runtime/console.h"
#include "guest-stub/runtime/format.h"

namespace {

FILE g_stdin_file;
FILE g_stdout_file;
FILE g_stderr_file;

bool is_console(FILE* f) { return f == &g_stdout_file || f == &g_stderr_file; }

// printf returns int; the formatter counts in size_t.
int clamp_count(size_t n) { return n > 0x7fffffff ? 0x7fffffff : static_cast<int>(n); }

} // namespace

extern "C" {

FILE* stdin = &g_stdin_file;
FILE* stdout = &g_stdout_file;
FILE* stderr = &g_stderr_file;

int vprintf(const char* fmt, va_list ap) { return clamp_count(guest::vprintf(fmt, ap)); }

int printf(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}

int vfprintf(FILE* f, const char* fmt, va_list ap)
{
    if (!is_console(f))
        return -1;
    return vprintf(fmt, ap);
}

int fprintf(FILE* f, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(f, fmt, ap);
    va_end(ap);
    return n;
}

int vsnprintf(char* buf, size_t size, const char* fmt, va_list ap)
{
    return clamp_count(guest::vsnformat(buf, size, fmt, ap));
}

int snprintf(char* buf, size_t size, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

// No bound is known: the caller promised room, as with the real sprintf.
int vsprintf(char* buf, const char* fmt, va_list ap) { return vsnprintf(buf, (size_t)0x7fffffff, fmt, ap); }

int sprintf(char* buf, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsprintf(buf, fmt, ap);
    va_end(ap);
    return n;
}

int fputs(const char* s, FILE* f)
{
    if (!is_console(f))
        return EOF;
    guest::console_write(s, strlen(s));
    return 1;
}

int puts(const char* s)
{
    guest::puts(s);
    return 1;
}

int fputc(int c, FILE* f)
{
    if (!is_console(f))
        return EOF;
    const char ch = static_cast<char>(c);
    guest::console_write(&ch, 1);
    return static_cast<unsigned char>(ch);
}

int putc(int c, FILE* f) { return fputc(c, f); }
int putchar(int c) { return fputc(c, stdout); }

size_t fwrite(const void* data, size_t size, size_t count, FILE* f)
{
    if (!is_console(f) || size == 0 || count == 0)
        return 0;
    size_t bytes;
    if (__builtin_mul_overflow(size, count, &bytes))
        return 0;
    guest::console_write(static_cast<const char*>(data), bytes);
    return count;
}

int fflush(FILE* f)
{
    if (f != nullptr && !is_console(f))
        return EOF;
    guest::console_flush();
    return 0;
}

// glibc's inline putc_unlocked/getc_unlocked call these when a FILE's
// buffer (never set up here) is full or empty.
int __overflow(FILE* f, int c) { return fputc(c, f); }
int __uflow(FILE*) { return EOF; }

int fgetc(FILE*) { return EOF; }
int getc(FILE*) { return EOF; }
int getchar(void) { return EOF; }

} // extern "C"
