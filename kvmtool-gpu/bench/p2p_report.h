// `bench p2p`'s results: the p2p guest's lines (and the native side's,
// which prints the same) as samples, their medians over trials as cells,
// and the tables: p2pBandwidthLatencyTest's matrices (uni- and
// bidirectional GB/s at the largest size, latency in µs; peer access off
// and on), native beside guest with the guest's share of native, and per
// pair of devices the sweep over sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <tuple>

#include "kvmtool-gpu/bench/bench_line.h"
#include "kvmtool-gpu/bench/bench_report.h"

namespace kvmgpu::bench {

// One trial of one measurement, or a pair's peer capability (kind "peer").
struct P2pSample {
    std::string side;   // "native" or "guest"
    std::string kind;   // "uni", "bidi", "lat" or "peer"
    std::string access; // "off" or "on"
    int src = 0, dst = 0;
    uint64_t bytes = 0, count = 0; // count: reps (uni, bidi) or iters (lat)
    uint64_t event_ns = 0, wall_ns = 0;
    bool can = false;   // kind "peer"
    std::string status; // "ok" or what failed
    auto wire() { return std::tie(side, kind, access, src, dst, bytes, count, event_ns, wall_ns, can, status); }
};

// A "p2p:" result line as a sample of `side`; nullopt for any other line
// and for values out of range (devices, sizes, counts).
std::optional<P2pSample> p2p_from_line(const BenchLine& l, const std::string& side);

// The median over trials of one measurement: GB/s for uni and bidi (both
// directions' bytes for bidi), µs per copy for lat (round trip: wall;
// GPU: events).
struct P2pCell {
    std::string side, kind, access;
    int src = 0, dst = 0;
    uint64_t bytes = 0;
    unsigned trials = 0;
    double value = 0, spread = 0; // GB/s or round-trip µs
    double gpu_us = 0;            // lat only
    std::string status = "ok";    // the first failed trial's status
};
std::vector<P2pCell> p2p_cells(const std::vector<P2pSample>& samples);

std::string p2p_csv(const std::vector<P2pCell>& cells);
std::string p2p_json(const std::vector<P2pCell>& cells, const BenchMeta& meta);
std::string p2p_markdown(const std::vector<P2pCell>& cells, const std::vector<P2pSample>& samples,
                         const BenchMeta& meta);

} // namespace kvmgpu::bench
