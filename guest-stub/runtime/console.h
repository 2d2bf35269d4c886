// Debug console: printf into a line buffer; each complete line (or a full
// buffer) goes to the VMM with ONE 8-byte MMIO write of the buffer's GPA
// (KVMGPU_CONSOLE_REG_WRITE), since every exit costs tens of microseconds
// under nested virtualization. The data sent includes the '\n'.
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

namespace guest {

void console_write(const char* data, size_t len);
void console_flush(); // sends a pending partial line, if any
size_t printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
size_t vprintf(const char* fmt, va_list ap);
void puts(const char* s); // s and a newline

// MMIO writes the console has made (one per line sent).
uint64_t console_mmio_writes();

} // namespace guest
