#include "kvmtool-gpu/bench/share_stats.h"

#include <algorithm>

namespace kvmgpu::bench {

std::optional<double> jain_index(const std::vector<double>& rates) {
    double sum = 0, squares = 0;
    for (double r : rates) {
        sum += r;
        squares += r * r;
    }
    if (rates.empty() || squares == 0) return std::nullopt;
    return sum * sum / (static_cast<double>(rates.size()) * squares);
}

ShareSummary summarize_share(const std::vector<ShareRow>& rows, const std::string& side, const std::string& work,
                             unsigned members) {
    ShareSummary s{side, work};
    std::vector<double> rates;
    std::vector<uint64_t> p50s;
    for (const ShareRow& r : rows) {
        if (r.side != side || r.work != work || r.members != members) continue;
        ++s.members;
        if (!r.ok()) continue;
        ++s.measured;
        rates.push_back(r.rate);
        p50s.push_back(r.lat_p50_ns);
        s.lat_p99_ns = std::max(s.lat_p99_ns, r.lat_p99_ns);
    }
    if (rates.empty()) return s;
    for (double r : rates) s.aggregate += r;
    s.min = *std::min_element(rates.begin(), rates.end());
    s.max = *std::max_element(rates.begin(), rates.end());
    s.jain = jain_index(rates);
    std::sort(p50s.begin(), p50s.end());
    s.lat_p50_ns = p50s[p50s.size() / 2];
    return s;
}

const char* share_unit(const std::string& work) { return work == "bandwidth" ? "GB/s" : "kernels/s"; }

} // namespace kvmgpu::bench
