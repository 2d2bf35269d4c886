// Logging for the VMM: one line per message on stderr, with a level, and a
// rate limiter for anything a guest can trigger at will.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>

namespace kvmgpu {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3 };
void set_log_level(LogLevel level);
void log_line(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) ::kvmgpu::log_line(::kvmgpu::LogLevel::Debug, __VA_ARGS__)
#define log_info(...) ::kvmgpu::log_line(::kvmgpu::LogLevel::Info, __VA_ARGS__)
#define log_warn(...) ::kvmgpu::log_line(::kvmgpu::LogLevel::Warn, __VA_ARGS__)
#define log_error(...) ::kvmgpu::log_line(::kvmgpu::LogLevel::Error, __VA_ARGS__)

// Allows at most `per_second` events in each one-second window; thread-safe.
class RateLimiter {
public:
    explicit RateLimiter(uint32_t per_second) : per_second_(per_second) {}
    bool allow();
    uint64_t suppressed() const { return suppressed_.load(std::memory_order_relaxed); }

private:
    uint32_t per_second_;
    std::atomic<int64_t> window_start_s_{-1};
    std::atomic<uint32_t> in_window_{0};
    std::atomic<uint64_t> suppressed_{0};
};

} // namespace kvmgpu
