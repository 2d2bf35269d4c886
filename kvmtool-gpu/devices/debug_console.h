// The guest's debug console (MMIO): single characters, or a whole line per
// exit through a kvmgpu_console_buf in guest RAM. Output goes to a sink
// (stdout by default) one complete line at a time.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "kvmtool-gpu/bus/bus_device.h"
#include "kvmtool-gpu/util/log.h"
#include "memmap/guest_memory.h"

namespace kvmgpu {

class DebugConsole : public BusDevice {
public:
    using Sink = std::function<void(std::string_view line)>;
    DebugConsole(const memmap::GuestMemory& mem, Sink sink);

    std::string_view name() const override { return "debug-console"; }
    void read(uint64_t, std::span<uint8_t>) override {}
    void write(uint64_t offset, std::span<const uint8_t> data) override;

    // Bytes a Linux-ABI guest wrote to stdout or stderr, line-buffered like the rest.
    void write_text(std::string_view text) { put(text); }
    // Emits a partial line still held (at guest exit).
    void flush();
    uint64_t rejected_writes() const { return rejected_; }
    // Warning lines about bad writes this console's rate limit held back.
    uint64_t log_lines_held_back() const { return bad_write_log_.suppressed(); }

private:
    void put(std::string_view text);

    const memmap::GuestMemory& mem_;
    Sink sink_;
    std::mutex mu_;
    std::string pending_;
    uint64_t rejected_ = 0;
    RateLimiter bad_write_log_{5}; // this VM's own: another VM's flood cannot hide its lines
};

} // namespace kvmgpu
