#include "kvmtool-gpu/bench/bandwidth_report.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "kvmtool-gpu/abi/bandwidth_rules.h"
#include "kvmtool-gpu/abi/console_tags.h"

namespace kvmgpu::bench {

double BandwidthResult::gbps() const {
    const uint64_t ns = clock == "tsc" ? wall_ns : event_ns;
    return ok() && ns ? static_cast<double>(key.bytes) * static_cast<double>(reps) / static_cast<double>(ns) : 0.0;
}

double BandwidthResult::wall_gbps() const {
    return ok() && wall_ns ? static_cast<double>(key.bytes) * static_cast<double>(reps) / static_cast<double>(wall_ns)
                           : 0.0;
}

std::optional<BandwidthResult> bandwidth_from_line(const BenchLine& line, const std::string& hpages) {
    if (line.tag != KVMGPU_TAG_BW) return std::nullopt;
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
    if (line.find("clock")) r.clock = line.get("clock"); // lines from before twocopy: events
    if (r.clock != "events" && r.clock != "tsc") return std::nullopt;
    if (line.find("trial")) {
        const auto t = line.fraction("trial");
        if (!t || t->first < 1 || t->first > t->second || t->second > kMaxTrials) return std::nullopt;
        r.key.trial = static_cast<unsigned>(t->first);
        r.key.trials = static_cast<unsigned>(t->second);
    }
    if (r.ok() && (r.clock == "tsc" ? r.wall_ns : r.event_ns) == 0) r.status = "error:zero_event_time";
    if (line.get("source") == "native") r.key.source = "native", r.key.gpages = r.key.hpages = "-";
    return r;
}

BandwidthCells::BandwidthCells(const std::vector<BandwidthResult>& all) {
    for (const auto& r : all) {
        trials_ = std::max(trials_, r.key.trials);
        const auto [it, fresh] = index_.try_emplace({r.key.mode(), r.key.dir, r.key.bytes}, cells_.size());
        if (fresh) cells_.emplace_back();
        cells_[it->second].trials.push_back(&r);
    }
    for (auto& c : cells_) {
        std::vector<double> ok;
        for (const BandwidthResult* r : c.trials)
            if (r->ok()) ok.push_back(r->gbps());
        c.gbps = trial_stats(std::move(ok));
    }
}

const BandwidthCell* BandwidthCells::find(const BandwidthKey& k) const {
    const auto it = index_.find({k.mode(), k.dir, k.bytes});
    return it == index_.end() ? nullptr : &cells_[it->second];
}

const BandwidthCell* BandwidthCells::native(const BandwidthKey& k, const std::string& native_kind) const {
    const BandwidthCell* n = find(BandwidthKey{"native", k.dir, native_kind, "-", "-", "none", k.bytes});
    return n && n->gbps && n->gbps->median > 0 ? n : nullptr;
}

std::optional<double> BandwidthCells::trial_ratio(const BandwidthResult& r, const std::string& native_kind) const {
    const BandwidthCell* n = native(r.key, native_kind);
    if (!n || !r.ok()) return std::nullopt;
    return r.gbps() / n->gbps->median;
}

std::optional<double> BandwidthCells::cell_ratio(const BandwidthCell& c, const std::string& native_kind) const {
    const BandwidthCell* n = native(c.key(), native_kind);
    if (!n || !c.gbps) return std::nullopt;
    return c.gbps->median / n->gbps->median;
}

std::optional<double> ratio_to_native(const std::vector<BandwidthResult>& all, const BandwidthResult& r,
                                      const std::string& native_kind) {
    return BandwidthCells(all).trial_ratio(r, native_kind);
}

bool judged_strategy(const std::string& name) {
    for (const auto& s : kSgStrategies)
        if (name == s.name) return strategy_is_judged(s.value);
    return false;
}

std::vector<TargetVerdict> bandwidth_targets(const std::vector<BandwidthResult>& all) {
    std::vector<TargetVerdict> out;
    const BandwidthCells cells(all);
    for (const auto& c : cells.cells()) {
        const BandwidthKey& k = c.key();
        if (k.source != "guest" || k.bytes < kTargetMinBytes) continue;
        double threshold;
        if (k.kind == "pinned") {
            threshold = 0.99;
        } else if (k.kind == "pageable" && k.gpages == "4K" && judged_strategy(k.strategy)) {
            threshold = 0.92;
        } else if (k.kind == "registered") { // no slower than the walk on the same buffer kind, same VM
            BandwidthKey walk = k;
            walk.kind = "pageable", walk.strategy = "walk";
            const BandwidthCell* w = cells.find(walk);
            const auto walk_ratio = w ? cells.cell_ratio(*w, "pinned") : std::nullopt;
            if (!walk_ratio) continue;
            threshold = *walk_ratio;
        } else {
            continue;
        }
        const BandwidthCell* n = cells.native(k, "pinned");
        out.push_back({c.trials.front(), threshold, cells.cell_ratio(c, "pinned"), c.gbps,
                       n ? n->gbps : std::nullopt});
    }
    return out;
}

namespace {
constexpr auto num = number_text;
std::string opt_num(std::optional<double> v) { return v ? num(*v) : ""; }

const char* kCsvHeader =
    "source,mode,dir,kind,gpages,hpages,strategy,bytes,reps,event_ns,wall_ns,gbps,wall_gbps,"
    "vs_native_pinned,vs_native_pageable,attempts,status,trial,trials,gvim_mode,clock\n";
} // namespace

std::string bandwidth_csv(const std::vector<BandwidthResult>& all) {
    const BandwidthCells cells(all);
    std::string out = kCsvHeader;
    for (const auto& r : all) {
        const auto& k = r.key;
        out += k.source + "," + k.mode() + "," + k.dir + "," + k.kind + "," + k.gpages + "," + k.hpages + "," +
               k.strategy + "," + std::to_string(k.bytes) + "," + std::to_string(r.reps) + "," +
               std::to_string(r.event_ns) + "," + std::to_string(r.wall_ns) + "," + num(r.gbps()) + "," +
               num(r.wall_gbps()) + "," + opt_num(cells.trial_ratio(r, "pinned")) + "," +
               opt_num(cells.trial_ratio(r, "pageable")) + "," + std::to_string(r.attempts) + "," + r.status + "," +
               std::to_string(k.trial) + "," + std::to_string(k.trials) + "," + k.gvim_mode() + "," + r.clock + "\n";
    }
    return out;
}

std::string bandwidth_json(const std::vector<BandwidthResult>& all, const BenchMeta& meta) {
    const BandwidthCells cells(all);
    return results_json(meta, all, [&](const BandwidthResult& r) {
        const auto& k = r.key;
        Json o = {{"source", k.source}, {"mode", k.mode()}, {"dir", k.dir}, {"kind", k.kind}, {"gpages", k.gpages},
                  {"hpages", k.hpages}, {"strategy", k.strategy}, {"bytes", k.bytes}, {"reps", r.reps},
                  {"event_ns", r.event_ns}, {"wall_ns", r.wall_ns}, {"gbps", r.gbps()}, {"wall_gbps", r.wall_gbps()}};
        for (const char* kind : {"pinned", "pageable"}) {
            const auto q = cells.trial_ratio(r, kind);
            o[std::string("vs_native_") + kind] = q ? Json(*q) : Json();
        }
        o["attempts"] = r.attempts, o["status"] = r.status, o["trial"] = k.trial, o["trials"] = k.trials;
        o["gvim_mode"] = k.gvim_mode(), o["clock"] = r.clock;
        return o;
    });
}

namespace {
// The spread with as many decimals as rate_text gives the median.
std::string spread_text(double median, double spread) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", median >= 100 ? 0 : median >= 10 ? 1 : median >= 1 ? 2 : 3, spread);
    return buf;
}

std::string range_text(const std::optional<TrialStats>& s) {
    return s ? rate_text(s->min) + "–" + rate_text(s->max) : "-";
}

// A table cell: the median GB/s, (ratio) for guest cells, and with several
// trials "±" half their range and, when fewer trials than planned are ok,
// how many the figure comes from.
std::string cell_text(const BandwidthCells& cells, const BandwidthCell* c) {
    if (!c) return "";
    if (!c->gbps) {
        bool missing = false;
        for (const BandwidthResult* r : c->trials) {
            if (!r->ok() && r->status != "not_supported" && r->status != "missing") return "ERR";
            missing |= r->status == "missing";
        }
        return missing ? "missing" : "n/s";
    }
    std::string s = rate_text(c->gbps->median);
    if (c->key().source == "guest")
        if (auto q = cells.cell_ratio(*c, "pinned")) s += " (" + percent_text(*q) + ")";
    if (cells.trials() > 1) {
        s += " ±" + spread_text(c->gbps->median, c->gbps->spread());
        if (c->gbps->n < c->key().trials)
            s += " [" + std::to_string(c->gbps->n) + " of " + std::to_string(c->key().trials) + " trials]";
    }
    return s;
}

// One GB/s table per direction: a row per mode, a column per size.
std::string rate_tables(const std::vector<BandwidthResult>& all, const BandwidthCells& cells) {
    std::vector<uint64_t> sizes;
    std::vector<std::string> modes;
    for (const auto& r : all) {
        if (std::find(sizes.begin(), sizes.end(), r.key.bytes) == sizes.end()) sizes.push_back(r.key.bytes);
        if (std::find(modes.begin(), modes.end(), r.key.mode()) == modes.end()) modes.push_back(r.key.mode());
    }
    std::sort(sizes.begin(), sizes.end());
    std::stable_partition(modes.begin(), modes.end(), [](const std::string& m) { return m.rfind("native", 0) == 0; });
    std::string out;
    for (const char* dir : {"htod", "dtoh"}) {
        std::map<std::pair<std::string, uint64_t>, const BandwidthCell*> at;
        for (const auto& c : cells.cells())
            if (c.key().dir == dir) at[{c.key().mode(), c.key().bytes}] = &c;
        if (at.empty()) continue;
        out += std::string("\n### ") + (dir == std::string("htod") ? "host to device" : "device to host") +
               " (GB/s)\n\n| mode | GViM |";
        for (uint64_t b : sizes) out += " " + size_text(b) + " |";
        out += "\n| --- | --- |";
        for (size_t i = 0; i < sizes.size(); ++i) out += " ---: |";
        out += "\n";
        for (const auto& m : modes) {
            std::string row, gvim;
            bool any = false;
            for (uint64_t b : sizes) {
                auto it = at.find({m, b});
                if (it != at.end()) any = true, gvim = it->second->key().gvim_mode();
                row += " " + cell_text(cells, it == at.end() ? nullptr : it->second) + " |";
            }
            if (any) out += "| " + m + " | " + (gvim == "native" ? "" : gvim) + " |" + row + "\n";
        }
    }
    return out;
}

// GViM's three modes side by side: a row per direction, host and guest page
// size and size where 2-copy (twocopy) or 1-copy (the bounce strategy) was
// measured, beside the bypass ways of the same VM (pinned, the walk or else
// auto, registered), so that "2-copy < 1-copy < bypass" reads off one row.
std::string gvim_table(const BandwidthCells& cells) {
    struct Row {
        unsigned dir; // index into kDirNames: htod rows first
        std::string hp, gp;
        uint64_t bytes;
        bool operator==(const Row&) const = default;
    };
    std::vector<std::string> hps, gps; // in order of first appearance
    std::vector<Row> rows;
    for (const auto& c : cells.cells()) {
        const BandwidthKey& k = c.key();
        if (k.source != "guest" || (k.gvim_mode() != "2-copy" && k.gvim_mode() != "1-copy")) continue;
        if (std::find(hps.begin(), hps.end(), k.hpages) == hps.end()) hps.push_back(k.hpages);
        if (std::find(gps.begin(), gps.end(), k.gpages) == gps.end()) gps.push_back(k.gpages);
        const Row r{k.dir == kDirNames[0] ? 0u : 1u, k.hpages, k.gpages, k.bytes};
        if (std::find(rows.begin(), rows.end(), r) == rows.end()) rows.push_back(r);
    }
    if (rows.empty()) return "";
    auto pos = [](const std::vector<std::string>& v, const std::string& x) {
        return std::find(v.begin(), v.end(), x) - v.begin();
    };
    std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
        return std::tuple(a.dir, pos(hps, a.hp), pos(gps, a.gp), a.bytes) <
               std::tuple(b.dir, pos(hps, b.hp), pos(gps, b.gp), b.bytes);
    });
    std::string out =
        "\n### GViM's modes (GB/s, % of native pinned)\n\n"
        "2-copy: the guest copies its pageable buffer into its own pinned bounce buffers, the VMM copies those "
        "into its staging, then DMA (twocopy; timed by the guest TSC, its copies included). 1-copy: the VMM "
        "copies the guest's pages into its staging, then DMA (pageable, bounce strategy). Bypass: DMA or GPU "
        "reads from guest RAM in place (pinned; pageable through the device walk, or auto where the walk was "
        "not run; registered).\n\n"
        "| dir | size | host pages | guest pages | native pinned | 2-copy: twocopy | 1-copy: bounce | "
        "bypass: pinned | bypass: walk | bypass: registered |\n"
        "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const auto& r : rows) {
        const std::string dir = kDirNames[r.dir];
        auto at = [&](const char* kind, const std::string& gp, const char* strategy) {
            return cells.find(BandwidthKey{"guest", dir, kind, gp, r.hp, strategy, r.bytes});
        };
        auto text = [&](const BandwidthCell* c, const std::string& suffix = "") {
            return c ? cell_text(cells, c) + suffix : std::string("-");
        };
        const BandwidthCell* walk = at("pageable", r.gp, "walk");
        const BandwidthCell* native = cells.native(BandwidthKey{"guest", dir, "", "", "", "", r.bytes}, "pinned");
        out += "| " + dir + " | " + size_text(r.bytes) + " | " + r.hp + " | " + r.gp + " | " +
               (native ? rate_text(native->gbps->median) : "-") + " | " + text(at("twocopy", r.gp, "none")) + " | " +
               text(at("pageable", r.gp, "bounce")) + " | " + text(at("pinned", "-", "none")) + " | " +
               (walk ? text(walk) : text(at("pageable", r.gp, "auto"), " [auto]")) + " | " +
               text(at("registered", r.gp, "none")) + " |\n";
    }
    return out;
}

// The verdict rows; with several trials, min–max columns beside the medians.
std::string target_rows(const std::vector<TargetVerdict>& verdicts, bool trials) {
    std::string out = trials ? "| mode | dir | size | GB/s | min–max | native pinned GB/s | native min–max | ratio | "
                               "target | verdict |\n"
                               "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n"
                             : "| mode | dir | size | GB/s | native pinned GB/s | ratio | target | verdict |\n"
                               "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n";
    for (const auto& v : verdicts) {
        const auto& k = v.result->key;
        out += "| " + k.mode() + " | " + k.dir + " | " + size_text(k.bytes) + " | " +
               (v.guest ? rate_text(v.guest->median) : v.result->status) + " | ";
        if (trials) out += range_text(v.guest) + " | ";
        out += (v.native ? rate_text(v.native->median) : "-") + " | ";
        if (trials) out += range_text(v.native) + " | ";
        out += (v.ratio ? percent_text(*v.ratio) : "-") + " | " + percent_text(v.threshold) + " | " +
               (v.met() ? "met" : v.ratio ? "MISSED by " + percent_text(v.threshold - *v.ratio) : "n/a") + " |\n";
    }
    return out;
}
} // namespace

std::string bandwidth_markdown(const std::vector<BandwidthResult>& all, const BenchMeta& meta) {
    const BandwidthCells cells(all);
    const unsigned trials = cells.trials();
    const std::string n = std::to_string(trials);
    std::string out = "## kvmtool-gpu bench bandwidth" +
                      (trials > 1 ? ": " + n + " trials per cell, medians shown" : std::string()) + "\n\n" +
                      meta_markdown(meta);
    out += meta.native_baseline
               ? "- GB/s from CUDA events around the copies; (x%) = of native pinned, same direction and size\n"
               : "- no native GPU baseline in this run: no ratios, no target verdicts\n";
    if (std::any_of(all.begin(), all.end(), [](const BandwidthResult& r) { return r.clock == "tsc"; }))
        out += "- twocopy (GViM's 2-copy) rows: GB/s from the guest TSC around the whole transfer (the guest's "
               "own copies, the vGPU's copy, the synchronize), not CUDA events, which would leave the guest's "
               "copies out; hardware time where the guest runs natively (ring 3 on KVM), emulator time where "
               "guest code is emulated. It also holds the doorbells and the waits for a free bounce buffer, "
               "which the event-timed rows leave out and which dominate small sizes; the CSV's wall_gbps "
               "gives every row's guest TSC figure\n";
    out += "- GViM: the GViM mode of each guest row: 2-copy (the guest's copy, the VMM's, DMA), 1-copy (the "
           "VMM's copy, DMA), bypass (no CPU copy: DMA or the GPU reads guest RAM in place)\n";
    if (trials > 1)
        out += "- " + n + " trials of every cell" +
               (meta.native_baseline ? ", native (first, in its own process) and guest alike" : std::string()) +
               ": each figure is the median trial (of an even number: the mean of the middle two)" +
               (meta.native_baseline ? ", a ratio is median guest over median native" : "") +
               ", and ±x is half the trials' min–max range in GB/s\n";
    out += rate_tables(all, cells);
    out += gvim_table(cells);
    const auto verdicts = bandwidth_targets(all);
    out += "\n### Targets, sizes >= 64 MiB: guest pinned >= 99% and guest pageable on 4 KiB guest "
           "pages (strategies auto, gather, walk) >= 92% of native pinned; guest registered no slower than the "
           "walk in the same VM (its target: the walk's ratio)\n\n";
    if (verdicts.empty())
        out += "No guest measurement at 64 MiB or more in this run.\n";
    else if (!meta.native_baseline)
        out += "Not judged: no native GPU baseline in this run.\n";
    else
        out += target_rows(verdicts, trials > 1);
    std::string incomplete;
    for (const auto& r : all)
        if (!r.ok())
            incomplete += "- " + r.key.mode() + " " + r.key.dir + " " + size_text(r.key.bytes) + ": " + r.status +
                          (trials > 1 ? " (trial " + std::to_string(r.key.trial) + "/" + std::to_string(r.key.trials) + ")"
                                      : "") +
                          "\n";
    if (!incomplete.empty()) out += "\n### Not measured\n\n" + incomplete;
    return out;
}

} // namespace kvmgpu::bench
