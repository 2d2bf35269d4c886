// The few libc memory and string functions the guest has. The compiler emits
// calls to memcpy/memset/memmove/memcmp on its own (struct copies, loops it
// recognises), so these must exist under exactly these C names.
#pragma once

#include <stddef.h>

extern "C" {
void* memcpy(void* dst, const void* src, size_t n);
void* memmove(void* dst, const void* src, size_t n);
void* memset(void* dst, int c, size_t n);
int memcmp(const void* a, const void* b, size_t n);
size_t strlen(const char* s);
int strcmp(const char* a, const char* b);
int strncmp(const char* a, const char* b, size_t n);
}
