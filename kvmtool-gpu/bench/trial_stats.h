// Median and spread of one cell's repeated trials (`bench bandwidth
// --trials N`): the report judges a cell by its median, so that one noisy
// trial cannot flip a verdict, and shows the spread beside it. Header-only
// and pure.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

namespace kvmgpu::bench {

struct TrialStats {
    double median = 0, min = 0, max = 0;
    unsigned n = 0; // trials the figures come from
    // Half the min-max range: what the report prints as "±".
    double spread() const { return (max - min) / 2; }
};

// nullopt for no values. An even count's median is the mean of the two
// middle values: symmetric (neither middle trial is preferred), and with two
// trials simply their mean.
inline std::optional<TrialStats> trial_stats(std::vector<double> v) {
    if (v.empty()) return std::nullopt;
    std::sort(v.begin(), v.end());
    const size_t mid = v.size() / 2;
    TrialStats s;
    s.median = v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
    s.min = v.front();
    s.max = v.back();
    s.n = static_cast<unsigned>(v.size());
    return s;
}

} // namespace kvmgpu::bench
