// PageSize names: "4K"/"2M"/"1G" out; those (any case) or the exact byte
// count in, so command lines and CSV columns can use either.
#include <charconv>
#include <cstdint>
#include <string_view>

#include "memmap/backing.h"

namespace memmap {

std::string_view to_string(PageSize p) {
    switch (p) {
    case PageSize::k4K: return "4K";
    case PageSize::k2M: return "2M";
    case PageSize::k1G: return "1G";
    }
    return "?";
}

bool parse_page_size(std::string_view s, PageSize* out) {
    static constexpr PageSize kAll[] = {PageSize::k4K, PageSize::k2M, PageSize::k1G};
    if (s.size() == 2) {
        const char unit = static_cast<char>(s[1] & ~0x20); // ASCII upper-case
        for (PageSize p : kAll) {
            const std::string_view name = to_string(p);
            if (s[0] == name[0] && unit == name[1]) {
                if (out) *out = p;
                return true;
            }
        }
        return false;
    }
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc{} || end != s.data() + s.size()) return false;
    for (PageSize p : kAll) {
        if (n == bytes(p)) {
            if (out) *out = p;
            return true;
        }
    }
    return false;
}

} // namespace memmap
