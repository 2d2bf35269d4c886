// <string.h> beyond what the runtime already has (runtime/mem.cpp:
// memcpy, memmove, memset, memcmp, strlen, strcmp, strncmp). Written
// against the runtime's mem.h, not glibc's <string.h>, whose C++ overloads
// (const char* strchr(const char*, int) & co.) clash with the C
// definitions; programs still see glibc's declarations and link to these.
#include <stdlib.h>

#include "guest-stub/runtime/mem.h"

extern "C" {

char* strcpy(char* dst, const char* src)
{
    char* d = dst;
    while ((*d++ = *src++) != '\0') {
    }
    return dst;
}

// Pads with NULs up to n; no terminator when src has n or more bytes.
char* strncpy(char* dst, const char* src, size_t n)
{
    size_t i = 0;
    for (; i < n && src[i] != '\0'; ++i)
        dst[i] = src[i];
    for (; i < n; ++i)
        dst[i] = '\0';
    return dst;
}

char* strcat(char* dst, const char* src)
{
    strcpy(dst + strlen(dst), src);
    return dst;
}

char* strncat(char* dst, const char* src, size_t n)
{
    char* d = dst + strlen(dst);
    size_t i = 0;
    for (; i < n && src[i] != '\0'; ++i)
        d[i] = src[i];
    d[i] = '\0';
    return dst;
}

size_t strnlen(const char* s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n] != '\0')
        ++n;
    return n;
}

char* strchr(const char* s, int c)
{
    for (;; ++s) {
        if (*s == static_cast<char>(c))
            return const_cast<char*>(s);
        if (*s == '\0')
            return nullptr;
    }
}

char* strrchr(const char* s, int c)
{
    const char* found = nullptr;
    for (;; ++s) {
        if (*s == static_cast<char>(c))
            found = s;
        if (*s == '\0')
            return const_cast<char*>(found);
    }
}

char* strstr(const char* hay, const char* needle)
{
    const size_t n = strlen(needle);
    for (; *hay != '\0' || n == 0; ++hay) {
        if (strncmp(hay, needle, n) == 0)
            return const_cast<char*>(hay);
        if (*hay == '\0')
            break;
    }
    return nullptr;
}

void* memchr(const void* p, int c, size_t n)
{
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i)
        if (b[i] == static_cast<unsigned char>(c))
            return const_cast<unsigned char*>(b + i);
    return nullptr;
}

char* strdup(const char* s)
{
    const size_t n = strlen(s) + 1;
    char* d = static_cast<char*>(malloc(n));
    if (d != nullptr)
        memcpy(d, s, n);
    return d;
}

} // extern "C"
