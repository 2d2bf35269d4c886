#include "kvmtool-gpu/bench/bench_line.h"

#include <algorithm>
#include <charconv>

namespace kvmgpu::bench {

namespace {
std::optional<uint64_t> plain_u64(std::string_view v) {
    if (v.empty()) return std::nullopt;
    uint64_t out = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
    return out;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The next whitespace-separated word of s from *pos; empty at the end.
std::string_view next_word(std::string_view s, size_t* pos) {
    while (*pos < s.size() && is_space(s[*pos])) ++*pos;
    const size_t start = *pos;
    while (*pos < s.size() && !is_space(s[*pos])) ++*pos;
    return s.substr(start, *pos - start);
}
} // namespace

const std::string* BenchLine::find(std::string_view key) const {
    for (const auto& [k, v] : fields)
        if (k == key) return &v;
    return nullptr;
}

std::string BenchLine::get(std::string_view key, std::string_view fallback) const {
    const std::string* v = find(key);
    return v ? *v : std::string(fallback);
}

std::optional<uint64_t> BenchLine::u64(std::string_view key) const {
    const std::string* v = find(key);
    return v ? plain_u64(*v) : std::nullopt;
}

std::optional<std::pair<uint64_t, uint64_t>> BenchLine::fraction(std::string_view key) const {
    const std::string* v = find(key);
    if (!v) return std::nullopt;
    const std::string_view s(*v);
    const size_t slash = s.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    const auto a = plain_u64(s.substr(0, slash)), b = plain_u64(s.substr(slash + 1));
    if (!a || !b) return std::nullopt;
    return std::pair{*a, *b};
}

std::optional<BenchLine> parse_bench_line(std::string_view line, const std::vector<std::string_view>& tags) {
    size_t pos = 0;
    const std::string_view tag = next_word(line, &pos);
    if (tag.empty() || std::find(tags.begin(), tags.end(), tag) == tags.end()) return std::nullopt;
    BenchLine out;
    out.tag = std::string(tag);
    for (std::string_view w = next_word(line, &pos); !w.empty(); w = next_word(line, &pos)) {
        const size_t eq = w.find('=');
        if (eq == std::string_view::npos || eq == 0) return std::nullopt;
        out.fields.emplace_back(std::string(w.substr(0, eq)), std::string(w.substr(eq + 1)));
    }
    return out;
}

} // namespace kvmgpu::bench
