#include "kvmtool-gpu/bench/multigpu_report.h"

#include <cstdio>
#include <set>
#include <sstream>

#include "kvmtool-gpu/abi/console_tags.h"

namespace kvmgpu::bench {

namespace {

std::optional<double> number(const BenchLine& l, std::string_view key) {
    const std::string* v = l.find(key);
    if (!v || v->empty()) return std::nullopt;
    char* end = nullptr;
    const double d = std::strtod(v->c_str(), &end);
    if (end != v->c_str() + v->size() || !(d >= 0)) return std::nullopt;
    return d;
}

std::string ms(std::optional<double> v) {
    if (!v) return "-";
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", *v);
    return b;
}

const MultigpuRow* find(const std::vector<MultigpuRow>& rows, uint64_t order, const std::string& side,
                        const std::string& mode) {
    for (const auto& r : rows)
        if (r.order == order && r.side == side && r.mode == mode) return &r;
    return nullptr;
}

} // namespace

std::optional<MultigpuRow> multigpu_from_line(const BenchLine& l, const std::string& side) {
    if (l.tag != KVMGPU_TAG_MULTIGPU) return std::nullopt;
    const auto order = l.u64("order");
    if (!order) return std::nullopt;
    MultigpuRow r;
    r.order = *order;
    r.side = side;
    if (auto t = number(l, "t_ms")) {
        r.mode = "t";
        r.t_ms = *t;
        return r;
    }
    r.mode = l.get("mode");
    const auto total = number(l, "total_ms"), gather = number(l, "gather_ms");
    if ((r.mode != "gg" && r.mode != "gh") || !total || !gather) return std::nullopt;
    r.total_ms = *total;
    r.gather_ms = *gather;
    r.check = l.get("check");
    return r;
}

std::optional<double> MultigpuSummary::difference_ms() const {
    if (!gg_ms || !gh_ms) return std::nullopt;
    return *gh_ms - *gg_ms;
}

std::optional<double> MultigpuSummary::over_5t() const {
    const auto d = difference_ms();
    if (!d || !t_ms || *t_ms <= 0) return std::nullopt;
    return *d / (5 * *t_ms);
}

MultigpuSummary summarize(const std::vector<MultigpuRow>& rows, uint64_t order, const std::string& side) {
    MultigpuSummary s;
    if (const auto* r = find(rows, order, side, "gg")) s.gg_ms = r->total_ms, s.gg_gather_ms = r->gather_ms;
    if (const auto* r = find(rows, order, side, "gh")) s.gh_ms = r->total_ms, s.gh_gather_ms = r->gather_ms;
    if (const auto* r = find(rows, order, side, "t")) s.t_ms = r->t_ms;
    return s;
}

std::string multigpu_csv(const std::vector<MultigpuRow>& rows) {
    std::ostringstream o;
    o << "order,side,mode,total_ms,gather_ms,t_ms,check\n";
    for (const auto& r : rows)
        o << r.order << ',' << r.side << ',' << r.mode << ',' << number_text(r.total_ms) << ','
          << number_text(r.gather_ms) << ',' << number_text(r.t_ms) << ',' << r.check << '\n';
    return o.str();
}

std::string multigpu_json(const std::vector<MultigpuRow>& rows, const BenchMeta& meta) {
    return results_json(meta, rows, [](const MultigpuRow& r) {
        Json j;
        j["order"] = r.order;
        j["side"] = r.side;
        j["mode"] = r.mode;
        j["total_ms"] = r.total_ms;
        j["gather_ms"] = r.gather_ms;
        j["t_ms"] = r.t_ms;
        j["check"] = r.check;
        return j;
    });
}

std::string multigpu_markdown(const std::vector<MultigpuRow>& rows, const BenchMeta& meta) {
    std::ostringstream o;
    o << "## kvmtool-gpu bench multigpu\n\n" << meta_markdown(meta) << "\n";
    o << "E = A*B + C*D on four devices; G_G gathers the three remote partial products on device 0 by peer "
         "copies, G_H through host memory. Times in ms, medians; T = one partial product copied device to host; "
         "the seed's model: G_H - G_G = 5T.\n\n";
    o << "| order | side | G_G ms | G_H ms | G_H - G_G | T ms | (G_H - G_G) / 5T | gather G_G | gather G_H |\n";
    o << "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    std::set<uint64_t> orders;
    for (const auto& r : rows) orders.insert(r.order);
    for (uint64_t n : orders)
        for (const char* side : {"native", "guest"}) {
            const MultigpuSummary s = summarize(rows, n, side);
            if (!s.gg_ms && !s.gh_ms && !s.t_ms) continue;
            const auto over = s.over_5t();
            char ratio[32] = "-";
            if (over) std::snprintf(ratio, sizeof ratio, "%.2f", *over);
            o << "| " << n << " | " << side << " | " << ms(s.gg_ms) << " | " << ms(s.gh_ms) << " | "
              << ms(s.difference_ms()) << " | " << ms(s.t_ms) << " | " << ratio << " | " << ms(s.gg_gather_ms)
              << " | " << ms(s.gh_gather_ms) << " |\n";
        }
    o << "\n### Guest against native (same run): the guest's speed as % of native's (native time / guest time)\n\n";
    o << "| order | G_G | G_H |\n| ---: | ---: | ---: |\n";
    for (uint64_t n : orders) {
        const MultigpuSummary g = summarize(rows, n, "guest"), nat = summarize(rows, n, "native");
        auto pct = [](std::optional<double> guest, std::optional<double> native) -> std::string {
            if (!guest || !native || *guest <= 0) return "-";
            return percent_text(*native / *guest);
        };
        o << "| " << n << " | " << pct(g.gg_ms, nat.gg_ms) << " | " << pct(g.gh_ms, nat.gh_ms) << " |\n";
    }
    return o.str();
}

} // namespace kvmgpu::bench
