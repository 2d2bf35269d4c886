#include "kvmtool-gpu/bench/bandwidth_report.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "kvmtool-gpu/bench/bandwidth_rules.h"

namespace kvmgpu::bench {

double BandwidthResult::gbps() const {
    return ok() && event_ns ? static_cast<double>(key.bytes) * static_cast<double>(reps) / static_cast<double>(event_ns)
                            : 0.0;
}

double BandwidthResult::wall_gbps() const {
    return ok() && wall_ns ? static_cast<double>(key.bytes) * static_cast<double>(reps) / static_cast<double>(wall_ns)
                           : 0.0;
}

std::optional<BandwidthResult> bandwidth_from_line(const BenchLine& line, const std::string& hpages) {
    if (line.tag != "BW") return std::nullopt;
    BandwidthResult r;
    r.key.source = "guest";
    r.key.dir = line.get("dir");
    r.key.kind = line.get("kind");
    r.key.strategy = line.get("strategy");
    r.key.gpages = r.key.kind == "pinned" ? "-" : line.get("gpages");
    r.key.hpages = hpages;
    r.status = line.get("status");
    const auto bytes = line.u64("bytes"), reps = line.u64("reps"), ev = line.u64("event_ns"), wall = line.u64("wall_ns");
    if (r.key.dir.empty() || r.key.kind.empty() || r.key.strategy.empty() || r.status.empty() || !bytes || !reps ||
        !ev || !wall)
        return std::nullopt;
    r.key.bytes = *bytes;
    r.reps = *reps;
    r.event_ns = *ev;
    r.wall_ns = *wall;
    r.attempts = static_cast<unsigned>(line.u64("attempts").value_or(1));
    if (r.ok() && r.event_ns == 0) r.status = "error:zero_event_time";
    if (line.get("source") == "native") r.key.source = "native", r.key.gpages = r.key.hpages = "-";
    return r;
}

std::string bandwidth_line(const BandwidthResult& r) {
    const auto& k = r.key;
    return "BW source=" + k.source + " dir=" + k.dir + " kind=" + k.kind + " gpages=" + k.gpages +
           " strategy=" + k.strategy + " bytes=" + std::to_string(k.bytes) + " reps=" + std::to_string(r.reps) +
           " event_ns=" + std::to_string(r.event_ns) + " wall_ns=" + std::to_string(r.wall_ns) +
           " attempts=" + std::to_string(r.attempts) + " status=" + r.status;
}

const BandwidthResult* native_match(const std::vector<BandwidthResult>& all, const BandwidthResult& r,
                                    const std::string& native_kind) {
    for (const auto& n : all)
        if (n.key.source == "native" && n.key.kind == native_kind && n.key.dir == r.key.dir &&
            n.key.bytes == r.key.bytes && n.ok())
            return &n;
    return nullptr;
}

std::optional<double> ratio_to_native(const std::vector<BandwidthResult>& all, const BandwidthResult& r,
                                      const std::string& native_kind) {
    const BandwidthResult* n = native_match(all, r, native_kind);
    if (!n || !r.ok() || n->gbps() <= 0) return std::nullopt;
    return r.gbps() / n->gbps();
}

bool judged_strategy(const std::string& name) {
    for (const auto& s : kSgStrategies)
        if (name == s.name) return strategy_is_judged(s.value);
    return false;
}

std::vector<TargetVerdict> bandwidth_targets(const std::vector<BandwidthResult>& all) {
    std::vector<TargetVerdict> out;
    for (const auto& r : all) {
        if (r.key.source != "guest" || r.key.bytes < kTargetMinBytes) continue;
        double threshold;
        if (r.key.kind == "pinned")
            threshold = 0.99;
        else if (r.key.kind == "pageable" && r.key.gpages == "4K" && judged_strategy(r.key.strategy))
            threshold = 0.92;
        else
            continue;
        out.push_back({&r, threshold, ratio_to_native(all, r, "pinned")});
    }
    return out;
}

namespace {
constexpr auto num = number_text;
std::string opt_num(std::optional<double> v) { return v ? num(*v) : ""; }

const char* kCsvHeader =
    "source,mode,dir,kind,gpages,hpages,strategy,bytes,reps,event_ns,wall_ns,gbps,wall_gbps,"
    "vs_native_pinned,vs_native_pageable,attempts,status\n";
} // namespace

std::string bandwidth_csv(const std::vector<BandwidthResult>& all) {
    std::string out = kCsvHeader;
    for (const auto& r : all) {
        const auto& k = r.key;
        out += k.source + "," + k.mode() + "," + k.dir + "," + k.kind + "," + k.gpages + "," + k.hpages + "," +
               k.strategy + "," + std::to_string(k.bytes) + "," + std::to_string(r.reps) + "," +
               std::to_string(r.event_ns) + "," + std::to_string(r.wall_ns) + "," + num(r.gbps()) + "," +
               num(r.wall_gbps()) + "," + opt_num(ratio_to_native(all, r, "pinned")) + "," +
               opt_num(ratio_to_native(all, r, "pageable")) + "," + std::to_string(r.attempts) + "," + r.status +
               "\n";
    }
    return out;
}

std::string bandwidth_json(const std::vector<BandwidthResult>& all, const BenchMeta& meta) {
    return results_json(meta, all, [&](tlbstudy::JsonWriter& w, const BandwidthResult& r) {
        const auto& k = r.key;
        w.field("source", k.source).field("mode", k.mode()).field("dir", k.dir).field("kind", k.kind);
        w.field("gpages", k.gpages).field("hpages", k.hpages).field("strategy", k.strategy);
        w.field("bytes", k.bytes).field("reps", r.reps).field("event_ns", r.event_ns).field("wall_ns", r.wall_ns);
        w.field("gbps", r.gbps()).field("wall_gbps", r.wall_gbps());
        for (const char* kind : {"pinned", "pageable"}) {
            w.key(std::string("vs_native_") + kind);
            if (auto q = ratio_to_native(all, r, kind))
                w.value(*q);
            else
                w.null();
        }
        w.field("attempts", uint64_t{r.attempts}).field("status", r.status);
    });
}

namespace {
std::string cell(const std::vector<BandwidthResult>& all, const BandwidthResult* r, bool with_ratio) {
    if (!r) return "";
    if (r->status == "not_supported") return "n/s";
    if (!r->ok()) return r->status == "missing" ? "missing" : "ERR";
    std::string s = rate_text(r->gbps());
    if (with_ratio && r->key.source == "guest")
        if (auto q = ratio_to_native(all, *r, "pinned")) s += " (" + percent_text(*q) + ")";
    return s;
}
} // namespace

std::string bandwidth_markdown(const std::vector<BandwidthResult>& all, const BenchMeta& meta) {
    std::string out = "## kvmtool-gpu bench bandwidth\n\n" + meta_markdown(meta);
    out += meta.native_baseline
               ? "- GB/s from CUDA events around the copies; (x%) = of native pinned, same direction and size\n"
               : "- no native GPU baseline in this run: no ratios, no target verdicts\n";
    std::vector<uint64_t> sizes;
    std::vector<std::string> modes;
    for (const auto& r : all) {
        if (std::find(sizes.begin(), sizes.end(), r.key.bytes) == sizes.end()) sizes.push_back(r.key.bytes);
        if (std::find(modes.begin(), modes.end(), r.key.mode()) == modes.end()) modes.push_back(r.key.mode());
    }
    std::sort(sizes.begin(), sizes.end());
    std::stable_partition(modes.begin(), modes.end(), [](const std::string& m) { return m.rfind("native", 0) == 0; });
    for (const char* dir : {"htod", "dtoh"}) {
        std::map<std::pair<std::string, uint64_t>, const BandwidthResult*> at;
        for (const auto& r : all)
            if (r.key.dir == dir) at[{r.key.mode(), r.key.bytes}] = &r;
        if (at.empty()) continue;
        out += std::string("\n### ") + (dir == std::string("htod") ? "host to device" : "device to host") +
               " (GB/s)\n\n| mode |";
        for (uint64_t b : sizes) out += " " + size_text(b) + " |";
        out += "\n| --- |";
        for (size_t i = 0; i < sizes.size(); ++i) out += " ---: |";
        out += "\n";
        for (const auto& m : modes) {
            std::string row = "| " + m + " |";
            bool any = false;
            for (uint64_t b : sizes) {
                auto it = at.find({m, b});
                any |= it != at.end();
                row += " " + cell(all, it == at.end() ? nullptr : it->second, true) + " |";
            }
            if (any) out += row + "\n";
        }
    }
    const auto verdicts = bandwidth_targets(all);
    out += "\n### Targets (issue 4), sizes >= 64 MiB: guest pinned >= 99% and guest pageable on 4 KiB guest "
           "pages (strategies auto, gather, walk) >= 92% of native pinned\n\n";
    if (verdicts.empty()) {
        out += "No guest measurement at 64 MiB or more in this run.\n";
    } else if (!meta.native_baseline) {
        out += "Not judged: no native GPU baseline in this run.\n";
    } else {
        out += "| mode | dir | size | GB/s | native pinned GB/s | ratio | target | verdict |\n"
               "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n";
        for (const auto& v : verdicts) {
            const auto& r = *v.result;
            const BandwidthResult* n = native_match(all, r, "pinned");
            out += "| " + r.key.mode() + " | " + r.key.dir + " | " + size_text(r.key.bytes) + " | " +
                   (r.ok() ? rate_text(r.gbps()) : r.status) + " | " + (n ? rate_text(n->gbps()) : "-") + " | " +
                   (v.ratio ? percent_text(*v.ratio) : "-") + " | " + percent_text(v.threshold) + " | " +
                   (v.met() ? "met" : v.ratio ? "MISSED by " + percent_text(v.threshold - *v.ratio) : "n/a") +
                   " |\n";
        }
    }
    std::string incomplete;
    for (const auto& r : all)
        if (!r.ok())
            incomplete += "- " + r.key.mode() + " " + r.key.dir + " " + size_text(r.key.bytes) + ": " + r.status + "\n";
    if (!incomplete.empty()) out += "\n### Not measured\n\n" + incomplete;
    return out;
}

} // namespace kvmgpu::bench
