// Line-buffered debug console (see console.h).
#include "guest-stub/runtime/console.h"

#include "guest-stub/runtime/format.h"
#include "guest-stub/runtime/mmio.h"
#include "kvmtool-gpu/abi/platform_abi.h"

namespace guest {
namespace {

// A kvmgpu_console_buf: its 8-byte header, then the line. In .bss, so its
// GPA is its address (the image is identity-mapped).
struct alignas(64) ConsoleLine {
    uint32_t len;
    uint32_t reserved;
    char data[KVMGPU_CONSOLE_MAX_LINE];
};
static_assert(__builtin_offsetof(ConsoleLine, len) == __builtin_offsetof(kvmgpu_console_buf, len));
static_assert(__builtin_offsetof(ConsoleLine, data) == __builtin_offsetof(kvmgpu_console_buf, data));
ConsoleLine g_line;
uint32_t g_used;
uint64_t g_writes;

void send_line()
{
    if (g_used == 0)
        return;
    g_line.len = g_used;
    g_line.reserved = 0;
    compiler_barrier();
    mmio_write64(KVMGPU_CONSOLE_GPA + KVMGPU_CONSOLE_REG_WRITE,
                 static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&g_line)));
    ++g_writes;
    g_used = 0;
}

void sink_write(void*, const char* data, size_t len) { console_write(data, len); }

} // namespace

void console_write(const char* data, size_t len)
{
    for (size_t i = 0; i < len; ++i) {
        g_line.data[g_used++] = data[i];
        if (data[i] == '\n' || g_used == KVMGPU_CONSOLE_MAX_LINE)
            send_line();
    }
}

void console_flush() { send_line(); }

size_t vprintf(const char* fmt, va_list ap) { return vformat(FormatSink{sink_write, nullptr}, fmt, ap); }

size_t printf(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}

void puts(const char* s)
{
    size_t n = 0;
    while (s[n] != '\0')
        ++n;
    console_write(s, n);
    console_write("\n", 1);
}

uint64_t console_mmio_writes() { return g_writes; }

} // namespace guest
