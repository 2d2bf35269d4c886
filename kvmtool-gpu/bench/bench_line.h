// One result line that a benchmark guest printed on its console, e.g.
//   BW dir=htod kind=pinned ... status=ok
// a tag, then space-separated key=value fields (values hold no spaces).
// The drivers parse the guests' output with this and nothing else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvmgpu::bench {

struct BenchLine {
    std::string tag;
    std::vector<std::pair<std::string, std::string>> fields; // in line order

    // nullptr when the key is absent.
    const std::string* find(std::string_view key) const;
    std::string get(std::string_view key, std::string_view fallback = "") const;
    // nullopt when absent or not a plain decimal number.
    std::optional<uint64_t> u64(std::string_view key) const;
    // "3/5" as {3, 5}: two plain decimal numbers around one '/'; nullopt
    // when absent or not of that shape (the caller checks the range).
    std::optional<std::pair<uint64_t, uint64_t>> fraction(std::string_view key) const;
};

// Parses `line` if its first word is one of `tags`; nullopt for any other
// line (a banner, a log line) or a line whose fields are not all key=value.
// Surrounding whitespace and a trailing newline are ignored.
std::optional<BenchLine> parse_bench_line(std::string_view line, const std::vector<std::string_view>& tags);

} // namespace kvmgpu::bench
