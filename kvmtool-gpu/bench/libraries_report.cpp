#include "kvmtool-gpu/bench/libraries_report.h"

#include <cstdio>

namespace kvmgpu::bench {

namespace {
constexpr uint64_t kGemmTargetFrom = 4096;
constexpr double kGemmTarget = 0.99, kBatchTarget = 0.90;

std::string fixed(double v, int digits) {
    char b[48];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}
std::string rate_text(const LibraryResult& r) { return r.ok() ? fixed(r.rate(), r.is_call_rate() ? 0 : 2) : "-"; }
} // namespace

double LibraryResult::rate() const {
    if (!ok()) return 0;
    return is_call_rate() ? double(reps) * 1e9 / double(wall_ns) : flop / double(event_ns) / 1e3;
}

std::optional<LibraryResult> library_result_from(const BenchLine& l, const std::string& source) {
    LibraryResult r;
    r.source = source;
    r.metric = l.get("metric");
    const auto n = l.u64("n"), reps = l.u64("reps"), event = l.u64("event_ns"), wall = l.u64("wall_ns"), flop = l.u64("flop");
    r.status = l.get("status");
    if (r.metric.empty() || r.status.empty() || !n || !reps || !event || !wall || !flop) return std::nullopt;
    r.n = *n, r.reps = *reps, r.event_ns = *event, r.wall_ns = *wall, r.flop = double(*flop);
    return r;
}

std::optional<double> library_ratio(const std::vector<LibraryResult>& all, const LibraryResult& g) {
    if (!g.ok()) return std::nullopt;
    for (const LibraryResult& r : all)
        if (r.source == "native" && r.metric == g.metric && r.n == g.n && r.ok()) return g.rate() / r.rate();
    return std::nullopt;
}

std::optional<double> library_target(const LibraryResult& r) {
    if (r.is_call_rate()) return kBatchTarget;
    if (r.n >= kGemmTargetFrom) return kGemmTarget;
    return std::nullopt;
}

std::string libraries_csv(const std::vector<LibraryResult>& all) {
    std::string s = "source,metric,n,reps,flop,event_ns,wall_ns,rate,unit,status\n";
    for (const LibraryResult& r : all)
        s += r.source + "," + r.metric + "," + std::to_string(r.n) + "," + std::to_string(r.reps) + "," +
             fixed(r.flop, 0) + "," + std::to_string(r.event_ns) + "," + std::to_string(r.wall_ns) + "," +
             fixed(r.rate(), 4) + "," + r.unit() + "," + r.status + "\n";
    return s;
}

std::string libraries_json(const std::vector<LibraryResult>& all, const BenchMeta& meta) {
    std::string s = "{\n  \"meta\": {";
    for (size_t i = 0; i < meta.fields.size(); ++i)
        s += std::string(i ? ", " : "") + "\"" + meta.fields[i].first + "\": \"" + meta.fields[i].second + "\"";
    s += "},\n  \"results\": [\n";
    for (size_t i = 0; i < all.size(); ++i) {
        const LibraryResult& r = all[i];
        s += "    {\"source\": \"" + r.source + "\", \"metric\": \"" + r.metric + "\", \"n\": " + std::to_string(r.n) +
             ", \"rate\": " + fixed(r.rate(), 4) + ", \"unit\": \"" + r.unit() + "\", \"status\": \"" + r.status + "\"";
        if (auto q = library_ratio(all, r)) s += ", \"of_native\": " + fixed(*q, 4);
        s += std::string("}") + (i + 1 < all.size() ? "," : "") + "\n";
    }
    return s + "  ]\n}\n";
}

std::string libraries_markdown(const std::vector<LibraryResult>& all, const BenchMeta& meta) {
    std::string s = "# bench libraries\n\n";
    for (const auto& [k, v] : meta.fields) s += "- " + k + ": " + v + "\n";
    s += "\n| cuBLAS in the guest | metric | n | native | guest | unit | guest / native | target | verdict |\n"
         "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const LibraryResult& g : all) {
        if (g.source == "native") continue;
        const LibraryResult* native = nullptr;
        for (const LibraryResult& r : all)
            if (r.source == "native" && r.metric == g.metric && r.n == g.n) native = &r;
        const auto q = library_ratio(all, g);
        const auto t = library_target(g);
        std::string verdict = !g.ok() ? g.status : !q ? "no native" : !t ? "-" : *q >= *t ? "met" : "MISSED";
        s += std::string("| ") + (g.source == kNvidiaGuestSource ? "NVIDIA's" : "forwarded") + " | " + g.metric + " | " +
             std::to_string(g.n) + " | " + (native ? rate_text(*native) : "-") + " | " +
             rate_text(g) + " | " + g.unit() + " | " + (q ? fixed(*q * 100, 1) + "%" : "-") + " | " +
             (t ? ">= " + fixed(*t * 100, 0) + "%" : "-") + " | " + verdict + " |\n";
    }
    return s;
}

} // namespace kvmgpu::bench
