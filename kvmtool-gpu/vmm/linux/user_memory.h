// A Linux-ABI guest's pointers as the system-call server sees them: guest
// virtual == guest physical, so a pointer is valid when its whole span is
// guest RAM (GuestMemory's checked translation: no wrap, no MMIO, nothing
// past RAM) and misses what the guest's page tables leave unmapped (page 0,
// the stack guard), or when it lies inside one alias (guest_aliases.h), or
// when every page of it is a mapped, accessible piece of the file window
// (file_window.h: the host's mapping of the file, a private copy on write).
// Everything else is EFAULT, as on Linux.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kvmtool-gpu/vmm/linux/file_window.h"
#include "kvmtool-gpu/vmm/linux/guest_aliases.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::linux_abi {

class UserMemory {
public:
    UserMemory(const memmap::GuestMemory& mem, std::vector<std::pair<uint64_t, uint64_t>> unmapped,
               const GuestAliases* aliases = nullptr, const FileWindow* window = nullptr)
        : mem_(mem), unmapped_(std::move(unmapped)), aliases_(aliases), window_(window) {}

    // Host view of [addr, addr + len); nullopt for EFAULT. len 0 gives an empty span.
    std::optional<std::span<uint8_t>> span(uint64_t addr, uint64_t len) const {
        if (len == 0) return std::span<uint8_t>();
        uint64_t end;
        if (__builtin_add_overflow(addr, len, &end)) return std::nullopt;
        if (window_ && window_->overlaps(addr, len)) return window_->span(addr, len);
        if (aliases_)
            if (auto gpa = aliases_->physical(addr, len)) return mem_.translate(memmap::GuestPhysAddr{*gpa}, len);
        for (const auto& [s, e] : unmapped_)
            if (addr < e && end > s) return std::nullopt;
        return mem_.translate(memmap::GuestPhysAddr{addr}, len);
    }
    bool read(uint64_t addr, void* dst, uint64_t len) const {
        auto s = span(addr, len);
        if (!s) return false;
        if (len) std::memcpy(dst, s->data(), len);
        return true;
    }
    bool write(uint64_t addr, const void* src, uint64_t len) const {
        auto s = span(addr, len);
        if (!s) return false;
        if (len) std::memcpy(s->data(), src, len);
        return true;
    }
    template <class T>
    bool write_obj(uint64_t addr, const T& v) const { return write(addr, &v, sizeof v); }
    template <class T>
    std::optional<T> read_obj(uint64_t addr) const {
        T v;
        if (!read(addr, &v, sizeof v)) return std::nullopt;
        return v;
    }
    // A NUL-terminated string of at most max-1 bytes: the string, or the
    // errno (EFAULT, ENAMETOOLONG) as a negative number.
    std::pair<std::string, int> string(uint64_t addr, uint64_t max) const {
        std::string out;
        for (uint64_t i = 0; i < max; ++i) {
            uint64_t at;
            if (__builtin_add_overflow(addr, i, &at)) return {"", -EFAULT};
            auto c = span(at, 1);
            if (!c) return {"", -EFAULT};
            if ((*c)[0] == 0) return {out, 0};
            out.push_back(static_cast<char>((*c)[0]));
        }
        return {"", -ENAMETOOLONG};
    }
    const memmap::GuestMemory& memory() const { return mem_; }

private:
    const memmap::GuestMemory& mem_;
    std::vector<std::pair<uint64_t, uint64_t>> unmapped_;
    const GuestAliases* aliases_;
    const FileWindow* window_;
};

} // namespace kvmgpu::linux_abi
