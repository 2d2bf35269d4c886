// A guest-physical address: a distinct type so it never mixes with host
// pointers or plain lengths by accident.
#pragma once

#include <compare>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace memmap {

struct GuestPhysAddr {
    uint64_t value = 0;

    constexpr auto operator<=>(const GuestPhysAddr&) const = default;

    // Checked add: nullopt when the sum wraps past 2^64.
    constexpr std::optional<GuestPhysAddr> checked_add(uint64_t delta) const {
        uint64_t out;
        if (__builtin_add_overflow(value, delta, &out)) return std::nullopt;
        return GuestPhysAddr{out};
    }
};

// "0x1f000": how an address (guest-physical, virtual, an offset) is written
// in every error message.
inline std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace memmap
