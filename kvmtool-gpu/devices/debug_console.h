// The guest's debug console (MMIO): single characters, or a whole line per
// exit through a kvmgpu_console_buf in guest RAM. Output goes to a sink
// (stdout by default) one complete line at a time, up to an output limit
// per VM: a guest must not be able to fill the operator's disk or terminal.
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
    // What a guest's lines may cost in all: each line counts its bytes plus
    // kLineCost (the prefix and newline a sink adds; an escaped byte is at
    // most 4). Past the limit the sink gets one notice line and nothing more.
    static constexpr uint64_t kOutputLimit = 16ull << 20;
    static constexpr uint64_t kLineCost = 16;
    DebugConsole(const memmap::GuestMemory& mem, Sink sink, uint64_t output_limit = kOutputLimit);

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
    void emit_line(); // pending_, within the limit; under mu_

    const memmap::GuestMemory& mem_;
    Sink sink_;
    std::mutex mu_;
    std::string pending_;
    uint64_t output_limit_;
    uint64_t output_spent_ = 0;
    bool output_cut_ = false; // the limit was reached: lines are dropped
    uint64_t rejected_ = 0;
    RateLimiter bad_write_log_{5}; // this VM's own: another VM's flood cannot hide its lines
};

} // namespace kvmgpu
