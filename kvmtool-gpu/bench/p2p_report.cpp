#include "kvmtool-gpu/bench/p2p_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "kvmtool-gpu/abi/console_tags.h"
#include "kvmtool-gpu/abi/p2p_rules.h"
#include "kvmtool-gpu/bench/trial_stats.h"

namespace kvmgpu::bench {

namespace {

std::string fixed(double v, int digits) {
    char b[32];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

std::string size_text(uint64_t b) {
    if (b >= (1ull << 30) && b % (1ull << 30) == 0) return std::to_string(b >> 30) + " GiB";
    if (b >= (1ull << 20) && b % (1ull << 20) == 0) return std::to_string(b >> 20) + " MiB";
    if (b >= (1ull << 10) && b % (1ull << 10) == 0) return std::to_string(b >> 10) + " KiB";
    return std::to_string(b) + " B";
}

using Key = std::tuple<std::string, std::string, std::string, int, int, uint64_t>; // side kind access src dst bytes

const P2pCell* find(const std::vector<P2pCell>& cells, const std::string& side, const std::string& kind,
                    const std::string& access, int src, int dst, uint64_t bytes) {
    for (const auto& c : cells)
        if (c.side == side && c.kind == kind && c.access == access && c.src == src && c.dst == dst && c.bytes == bytes)
            return &c;
    return nullptr;
}

std::string cell_text(const P2pCell* c, int digits) {
    if (!c) return "-";
    if (c->status != "ok") return c->status;
    return fixed(c->value, digits);
}

std::string ratio_text(const P2pCell* guest, const P2pCell* native) {
    if (!guest || !native || guest->status != "ok" || native->status != "ok" || native->value <= 0) return "-";
    return percent_text(guest->value / native->value);
}

} // namespace

std::optional<P2pSample> p2p_from_line(const BenchLine& l, const std::string& side) {
    if (l.tag != KVMGPU_TAG_P2P) return std::nullopt;
    P2pSample s;
    s.side = side;
    s.kind = l.get("kind");
    const auto src = l.u64("src"), dst = l.u64("dst");
    if (!src || !dst || *src >= kP2pMaxDevices || *dst >= kP2pMaxDevices) return std::nullopt;
    s.src = static_cast<int>(*src);
    s.dst = static_cast<int>(*dst);
    if (s.kind == "peer") {
        const std::string can = l.get("can");
        if (can != "0" && can != "1") return std::nullopt;
        s.can = can == "1";
        return s;
    }
    if (s.kind != "uni" && s.kind != "bidi" && s.kind != "lat") return std::nullopt;
    s.access = l.get("access");
    if (s.access != "off" && s.access != "on") return std::nullopt;
    const auto bytes = l.u64("bytes"), count = l.u64(s.kind == "lat" ? "iters" : "reps"), ev = l.u64("event_ns");
    if (!bytes || *bytes == 0 || *bytes > kP2pMaxBytes || !count || *count == 0 || *count > kP2pMaxLatencyIters || !ev)
        return std::nullopt;
    s.bytes = *bytes;
    s.count = *count;
    s.event_ns = *ev;
    if (s.kind == "lat") {
        const auto wall = l.u64("wall_ns");
        if (!wall) return std::nullopt;
        s.wall_ns = *wall;
    }
    s.status = l.get("status");
    if (s.status.empty()) return std::nullopt;
    return s;
}

std::vector<P2pCell> p2p_cells(const std::vector<P2pSample>& samples) {
    std::map<Key, std::vector<const P2pSample*>> groups;
    std::vector<Key> order;
    for (const auto& s : samples) {
        if (s.kind == "peer") continue;
        const Key k{s.side, s.kind, s.access, s.src, s.dst, s.bytes};
        if (!groups.count(k)) order.push_back(k);
        groups[k].push_back(&s);
    }
    std::vector<P2pCell> cells;
    for (const Key& k : order) {
        P2pCell c;
        std::tie(c.side, c.kind, c.access, c.src, c.dst, c.bytes) = k;
        std::vector<double> values, gpu;
        for (const P2pSample* s : groups[k]) {
            if (s->status != "ok") {
                if (c.status == "ok") c.status = s->status;
                continue;
            }
            if (c.kind == "lat") {
                values.push_back(static_cast<double>(s->wall_ns) / 1e3 / static_cast<double>(s->count));
                gpu.push_back(static_cast<double>(s->event_ns) / 1e3 / static_cast<double>(s->count));
            } else if (s->event_ns > 0) {
                const double moved = static_cast<double>(s->bytes * s->count) * (c.kind == "bidi" ? 2 : 1);
                values.push_back(moved / static_cast<double>(s->event_ns)); // bytes per ns = GB/s
            }
        }
        if (const auto st = trial_stats(values)) {
            c.value = st->median;
            c.spread = st->spread();
            c.trials = st->n;
            if (const auto g = trial_stats(gpu)) c.gpu_us = g->median;
        } else if (c.status == "ok") {
            c.status = "no_time";
        }
        cells.push_back(c);
    }
    return cells;
}

std::string p2p_csv(const std::vector<P2pCell>& cells) {
    std::ostringstream o;
    o << "side,kind,access,src,dst,bytes,trials,value,spread,unit,gpu_us,status\n";
    for (const auto& c : cells)
        o << c.side << ',' << c.kind << ',' << c.access << ',' << c.src << ',' << c.dst << ',' << c.bytes << ','
          << c.trials << ',' << number_text(c.value) << ',' << number_text(c.spread) << ','
          << (c.kind == "lat" ? "us" : "GB/s") << ',' << number_text(c.gpu_us) << ',' << c.status << '\n';
    return o.str();
}

std::string p2p_json(const std::vector<P2pCell>& cells, const BenchMeta& meta) {
    return results_json(meta, cells, [](const P2pCell& c) {
        Json j;
        j["side"] = c.side;
        j["kind"] = c.kind;
        j["access"] = c.access;
        j["src"] = c.src;
        j["dst"] = c.dst;
        j["bytes"] = c.bytes;
        j["trials"] = c.trials;
        j["value"] = c.value;
        j["spread"] = c.spread;
        j["unit"] = c.kind == "lat" ? "us" : "GB/s";
        j["gpu_us"] = c.gpu_us;
        j["status"] = c.status;
        return j;
    });
}

std::string p2p_markdown(const std::vector<P2pCell>& cells, const std::vector<P2pSample>& samples,
                         const BenchMeta& meta) {
    std::ostringstream o;
    o << "## kvmtool-gpu bench p2p\n\n" << meta_markdown(meta) << "\n";
    int devices = 0;
    uint64_t largest = 0;
    std::set<uint64_t> sizes;
    for (const auto& c : cells) {
        devices = std::max({devices, c.src + 1, c.dst + 1});
        if (c.kind != "lat") sizes.insert(c.bytes), largest = std::max(largest, c.bytes);
    }
    const bool have_native =
        std::any_of(cells.begin(), cells.end(), [](const P2pCell& c) { return c.side == "native"; });
    std::map<std::pair<int, int>, bool> can;
    for (const auto& s : samples)
        if (s.kind == "peer" && s.side == "guest") can[{s.src, s.dst}] = s.can;
    o << "Copies are cuMemcpyPeerAsync from the row's device (src) to the column's (dst), on a stream of the "
         "source's context, timed with CUDA events; bidirectional counts both directions' bytes. Latency: one "
         "4-byte copy plus cuStreamSynchronize, round trip per copy (guest TSC / host steady clock); GPU time in "
         "the per-pair table. Medians of the trials. \"n/a\": the devices cannot access each other's memory, so "
         "there is no peer-access-on measurement. Guest share = guest GB/s / native GB/s.\n";
    auto matrix = [&](const std::string& title, const std::string& kind, const std::string& access, uint64_t bytes,
                      int digits) {
        for (const char* side : {"native", "guest", "ratio"}) {
            if (!have_native && std::string(side) != "guest") continue;
            o << "\n### " << title << ", " << (std::string(side) == "ratio" ? "guest share of native" : side)
              << "\n\n|   D\\D |";
            for (int d = 0; d < devices; ++d) o << ' ' << d << " |";
            o << "\n| ---: |";
            for (int d = 0; d < devices; ++d) o << " ---: |";
            o << '\n';
            for (int s = 0; s < devices; ++s) {
                o << "| " << s << " |";
                for (int d = 0; d < devices; ++d) {
                    const P2pCell* g = find(cells, "guest", kind, access, s, d, bytes);
                    const P2pCell* n = find(cells, "native", kind, access, s, d, bytes);
                    std::string t;
                    if (access == "on" && s != d && can.count({s, d}) && !can[{s, d}]) t = "n/a";
                    else if (std::string(side) == "ratio" && kind == "lat")
                        t = g && n && g->status == "ok" && n->status == "ok" ? "+" + fixed(g->value - n->value, 2) + " µs"
                                                                             : "-";
                    else if (std::string(side) == "ratio") t = ratio_text(g, n);
                    else t = cell_text(std::string(side) == "guest" ? g : n, digits);
                    o << ' ' << t << " |";
                }
                o << '\n';
            }
        }
    };
    for (const char* access : {"off", "on"}) {
        const std::string label = std::string("P2P=") + (std::string(access) == "on" ? "Enabled" : "Disabled");
        if (largest) {
            matrix("Unidirectional " + label + " Bandwidth Matrix (GB/s, " + size_text(largest) + ")", "uni", access,
                   largest, 2);
            matrix("Bidirectional " + label + " Bandwidth Matrix (GB/s, " + size_text(largest) + ")", "bidi", access,
                   largest, 2);
        }
        matrix(label + " Latency Matrix (µs, round trip per 4-byte copy; share row: guest - native)", "lat", access, 4,
               2);
    }
    o << "\n### Every size, per ordered pair of devices (GB/s; guest share of native)\n\n";
    o << "| src | dst | access | bytes | uni native | uni guest | uni share | bidi native | bidi guest | bidi share |\n";
    o << "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (int s = 0; s < devices; ++s)
        for (int d = 0; d < devices; ++d)
            for (const char* access : {"off", "on"})
                for (uint64_t b : sizes) {
                    const P2pCell* un = find(cells, "native", "uni", access, s, d, b);
                    const P2pCell* ug = find(cells, "guest", "uni", access, s, d, b);
                    const P2pCell* bn = find(cells, "native", "bidi", access, s, d, b);
                    const P2pCell* bg = find(cells, "guest", "bidi", access, s, d, b);
                    if (!un && !ug && !bn && !bg) continue;
                    o << "| " << s << " | " << d << " | " << access << " | " << size_text(b) << " | "
                      << cell_text(un, 2) << " | " << cell_text(ug, 2) << " | " << ratio_text(ug, un) << " | "
                      << cell_text(bn, 2) << " | " << cell_text(bg, 2) << " | " << ratio_text(bg, bn) << " |\n";
                }
    o << "\n### Latency, per ordered pair (µs per 4-byte copy)\n\n";
    o << "| src | dst | access | round trip native | round trip guest | guest - native | GPU native | GPU guest |\n";
    o << "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n";
    for (int s = 0; s < devices; ++s)
        for (int d = 0; d < devices; ++d)
            for (const char* access : {"off", "on"}) {
                const P2pCell* n = find(cells, "native", "lat", access, s, d, 4);
                const P2pCell* g = find(cells, "guest", "lat", access, s, d, 4);
                if (!n && !g) continue;
                const bool both = n && g && n->status == "ok" && g->status == "ok";
                o << "| " << s << " | " << d << " | " << access << " | " << cell_text(n, 2) << " | " << cell_text(g, 2)
                  << " | " << (both ? fixed(g->value - n->value, 2) : "-") << " | "
                  << (n && n->status == "ok" ? fixed(n->gpu_us, 2) : "-") << " | "
                  << (g && g->status == "ok" ? fixed(g->gpu_us, 2) : "-") << " |\n";
            }
    return o.str();
}

} // namespace kvmgpu::bench
