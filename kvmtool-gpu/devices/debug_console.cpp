#include "kvmtool-gpu/devices/debug_console.h"

#include <cstring>
#include <string>
#include <vector>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu {

DebugConsole::DebugConsole(const memmap::GuestMemory& mem, Sink sink, uint64_t output_limit)
    : mem_(mem), sink_(std::move(sink)), output_limit_(output_limit) {}

void DebugConsole::write(uint64_t offset, std::span<const uint8_t> data) {
    if (offset == KVMGPU_CONSOLE_REG_PUTC && data.size() >= 1) {
        put(std::string_view(reinterpret_cast<const char*>(data.data()), 1));
        return;
    }
    if (offset == KVMGPU_CONSOLE_REG_WRITE && data.size() == 8) {
        uint64_t gpa;
        std::memcpy(&gpa, data.data(), 8);
        // The guest owns the buffer: read the header once, bound the length,
        // then copy the text out before using it.
        auto len = mem_.read_obj<uint32_t>(memmap::GuestPhysAddr{gpa});
        std::vector<char> text;
        if (len && *len <= KVMGPU_CONSOLE_MAX_LINE) {
            text.resize(*len);
            auto body = memmap::GuestPhysAddr{gpa}.checked_add(sizeof(kvmgpu_console_buf));
            if (*len == 0 || (body && mem_.read(*body, text.data(), *len))) {
                put(std::string_view(text.data(), text.size()));
                return;
            }
        }
    }
    ++rejected_;
    if (bad_write_log_.allow()) log_warn("debug-console: ignored a bad write at offset 0x%llx", (unsigned long long)offset);
}

void DebugConsole::put(std::string_view text) {
    std::lock_guard lock(mu_);
    if (output_cut_) return;
    for (char c : text) {
        if (c == '\n') emit_line();
        else if (pending_.size() < KVMGPU_CONSOLE_MAX_LINE) pending_.push_back(c);
    }
}

void DebugConsole::emit_line() {
    const uint64_t cost = pending_.size() + kLineCost;
    if (!output_cut_ && output_spent_ + cost > output_limit_) {
        output_cut_ = true;
        sink_("[kvmtool-gpu: this guest's console output reached its limit (" + std::to_string(output_limit_ >> 10) +
              " KiB); the rest is dropped]");
    }
    if (!output_cut_) {
        output_spent_ += cost;
        sink_(pending_);
    }
    pending_.clear();
}

void DebugConsole::flush() {
    std::lock_guard lock(mu_);
    if (!pending_.empty()) emit_line();
}

} // namespace kvmgpu
