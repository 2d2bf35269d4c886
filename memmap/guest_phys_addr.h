// A guest-physical address: a distinct type so it never mixes with host
// pointers or plain lengths by accident.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>

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

} // namespace memmap
