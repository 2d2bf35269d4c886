// Scatter-gather translation: one pass over a guest-supplied list, bounded by
// its length, that never throws; any bad entry rejects the whole list so a
// transfer is never half-described.
#include "memmap/scatter_gather.h"

namespace memmap {

namespace {

std::optional<std::vector<HostRun>> translate_list(const GuestMemory& mem, std::span<const GuestRange> ranges,
                                                   bool merge, SgStats* stats) {
    if (stats) *stats = SgStats{};
    std::vector<HostRun> runs;
    runs.reserve(ranges.size());
    uint64_t total = 0;
    for (const GuestRange& r : ranges) {
        const auto host = mem.translate(r.gpa, r.len); // refuses len 0, wrap, straddling
        if (!host) return std::nullopt;
        if (__builtin_add_overflow(total, r.len, &total)) return std::nullopt;
        // Merge on host contiguity, not guest-physical: two regions that are
        // neighbours in guest-physical space are separate mappings, and the
        // copy engine only cares about host addresses.
        if (merge && !runs.empty()) {
            HostRun& last = runs.back();
            // last.len <= total, which did not overflow, so neither does this.
            if (last.host + last.len == host->data()) {
                last.len += r.len;
                continue;
            }
        }
        runs.push_back(HostRun{host->data(), r.gpa, r.len});
    }
    if (stats) *stats = SgStats{ranges.size(), runs.size(), total};
    return runs;
}

} // namespace

std::optional<std::vector<HostRun>> coalesce(const GuestMemory& mem, std::span<const GuestRange> ranges,
                                             SgStats* stats) {
    return translate_list(mem, ranges, /*merge=*/true, stats);
}

std::optional<std::vector<HostRun>> translate_each(const GuestMemory& mem, std::span<const GuestRange> ranges,
                                                   SgStats* stats) {
    return translate_list(mem, ranges, /*merge=*/false, stats);
}

} // namespace memmap
