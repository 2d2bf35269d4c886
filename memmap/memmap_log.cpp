#include "memmap/memmap_log.h"

#include <cstdarg>
#include <cstdio>

namespace memmap {

namespace {

void stderr_sink(std::string_view line) {
    std::fprintf(stderr, "memmap: %.*s\n", static_cast<int>(line.size()), line.data());
}

LogSink g_sink = stderr_sink;

} // namespace

void set_log_sink(LogSink sink) { g_sink = sink ? sink : stderr_sink; }

void log_line(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    const size_t len = static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1;
    g_sink(std::string_view(buf, len));
}

} // namespace memmap
