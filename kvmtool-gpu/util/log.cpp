#include "kvmtool-gpu/util/log.h"

#include <cstdarg>

namespace kvmgpu {

namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::Info)};
const char* tag(LogLevel l) {
    switch (l) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warning";
    case LogLevel::Error: return "error";
    }
    return "?";
}
} // namespace

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }

void log_line(LogLevel level, const char* fmt, ...) {
    if (static_cast<int>(level) < g_level.load(std::memory_order_relaxed)) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "kvmtool-gpu: %s: %s\n", tag(level), buf);
}

bool RateLimiter::allow() {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    int64_t start = window_start_s_.load(std::memory_order_relaxed);
    if (start != now && window_start_s_.compare_exchange_strong(start, now)) in_window_.store(0);
    if (in_window_.fetch_add(1, std::memory_order_relaxed) < per_second_) return true;
    suppressed_.fetch_add(1, std::memory_order_relaxed);
    return false;
}

} // namespace kvmgpu
