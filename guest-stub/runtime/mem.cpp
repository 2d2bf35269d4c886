// memcpy & co. for the guest (see mem.h). The copies use `rep movsb` /
// `rep stosb` (fast strings on every CPU we meet) so the compiler cannot
// turn a loop here back into a call to the function being defined.
#include "guest-stub/runtime/mem.h"

#include <stdint.h>

extern "C" {

void* memcpy(void* dst, const void* src, size_t n)
{
    void* d = dst;
    asm volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
    return dst;
}

void* memmove(void* dst, const void* src, size_t n)
{
    auto d = reinterpret_cast<uintptr_t>(dst);
    auto s = reinterpret_cast<uintptr_t>(src);
    if (d <= s || d - s >= n)
        return memcpy(dst, src, n);
    // Overlapping with dst above src: copy backwards.
    void* dl = reinterpret_cast<void*>(d + n - 1);
    const void* sl = reinterpret_cast<const void*>(s + n - 1);
    asm volatile("std\n\trep movsb\n\tcld" : "+D"(dl), "+S"(sl), "+c"(n) : : "memory");
    return dst;
}

void* memset(void* dst, int c, size_t n)
{
    void* d = dst;
    asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
    return dst;
}

int memcmp(const void* a, const void* b, size_t n)
{
    auto pa = static_cast<const unsigned char*>(a);
    auto pb = static_cast<const unsigned char*>(b);
    for (size_t i = 0; i < n; ++i)
        if (pa[i] != pb[i])
            return pa[i] < pb[i] ? -1 : 1;
    return 0;
}

size_t strlen(const char* s)
{
    size_t n = 0;
    while (s[n] != '\0')
        ++n;
    return n;
}

int strcmp(const char* a, const char* b)
{
    while (*a != '\0' && *a == *b) {
        ++a;
        ++b;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char* a, const char* b, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (a[i] != b[i] || a[i] == '\0')
            return (unsigned char)a[i] - (unsigned char)b[i];
    }
    return 0;
}

} // extern "C"
