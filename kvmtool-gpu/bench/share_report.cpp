#include "kvmtool-gpu/bench/share_report.h"

#include <set>
#include <sstream>

namespace kvmgpu::bench {

namespace {

std::string rate(const std::string& work, double v) {
    return work == "bandwidth" ? rate_text(v) : number_text(v);
}

std::string us(uint64_t ns) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", static_cast<double>(ns) / 1000.0);
    return b;
}

std::string ratio(const ShareSummary& num, const ShareSummary& den) {
    if (!num.complete() || !den.complete() || den.aggregate <= 0) return "-";
    return percent_text(num.aggregate / den.aggregate);
}

} // namespace

std::string share_csv(const std::vector<ShareRow>& rows) {
    std::ostringstream o;
    o << "side,work,members,member,rate,unit,lat_p50_ns,lat_p99_ns,status\n";
    for (const auto& r : rows)
        o << r.side << ',' << r.work << ',' << r.members << ',' << r.member << ',' << number_text(r.rate) << ','
          << share_unit(r.work) << ',' << r.lat_p50_ns << ',' << r.lat_p99_ns << ",\"" << r.status_text() << "\"\n";
    return o.str();
}

std::string share_json(const std::vector<ShareRow>& rows, const BenchMeta& meta) {
    return results_json(meta, rows, [](const ShareRow& r) {
        Json j;
        j["side"] = r.side;
        j["work"] = r.work;
        j["members"] = r.members;
        j["member"] = r.member;
        j["rate"] = r.rate;
        j["unit"] = share_unit(r.work);
        j["lat_p50_ns"] = r.lat_p50_ns;
        j["lat_p99_ns"] = r.lat_p99_ns;
        j["status"] = r.status;
        if (!r.note.empty()) j["note"] = r.note;
        return j;
    });
}

std::string share_markdown(const std::vector<ShareRow>& rows, const BenchMeta& meta) {
    std::ostringstream o;
    o << "## kvmtool-gpu bench share\n\n" << meta_markdown(meta) << "\n";
    o << "N VMs (each its own vGPU: GPU worker, context, quotas, doorbell) or N native processes run the same "
         "work at once on one GPU. Rates are each member's work over one common window in which all of them "
         "work; aggregate = their sum. Latency: one synchronous one-word cuMemsetD32 after every unit of work, "
         "timed by the member itself (p50 = median over members of their medians, p99 = the worst member's).\n";
    std::set<std::string> works;
    std::set<unsigned> counts;
    for (const auto& r : rows) {
        works.insert(r.work);
        counts.insert(r.members);
    }
    for (const auto& work : works) {
        o << "\n### " << work << " (" << share_unit(work) << ")\n\n";
        o << "| N | guests: aggregate | min / max per VM | Jain | native, 1 process | native, N processes | "
             "guests / native 1 | guests / native N | latency p50 / p99 us, guest | native N |\n";
        o << "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
        const ShareSummary one = summarize_share(rows, "native", work, 1);
        for (unsigned n : counts) {
            const ShareSummary g = summarize_share(rows, "guest", work, n);
            const ShareSummary nat = summarize_share(rows, "native", work, n);
            if (g.members == 0 && nat.members == 0) continue;
            auto agg = [&](const ShareSummary& s) {
                if (s.members == 0) return std::string("-");
                return s.complete() ? rate(work, s.aggregate)
                                    : "FAILED (" + std::to_string(s.measured) + " of " + std::to_string(s.members) + ")";
            };
            char jain[16] = "-";
            if (g.jain) std::snprintf(jain, sizeof jain, "%.3f", *g.jain);
            o << "| " << n << " | " << agg(g) << " | "
              << (g.measured ? rate(work, g.min) + " / " + rate(work, g.max) : "-") << " | " << jain << " | "
              << agg(one) << " | " << agg(nat) << " | " << ratio(g, one) << " | " << ratio(g, nat) << " | "
              << (g.measured ? us(g.lat_p50_ns) + " / " + us(g.lat_p99_ns) : "-") << " | "
              << (nat.measured ? us(nat.lat_p50_ns) + " / " + us(nat.lat_p99_ns) : "-") << " |\n";
        }
    }
    bool intruders = false;
    for (const auto& r : rows)
        if (r.side == "intruder") {
            if (!intruders)
                o << "\n### The misbehaving VM of each group (" << meta.get("intruder")
                  << "): the table's guest figures are the others'\n\n";
            intruders = true;
            o << "- " << r.work << " N=" << r.members << ": " << r.status_text() << "\n";
        }
    bool failures = false;
    for (const auto& r : rows)
        if (!r.ok() && r.side != "intruder") {
            if (!failures) o << "\n### Failed members\n\n";
            failures = true;
            o << "- " << r.side << " " << r.work << " N=" << r.members << " #" << r.member << ": " << r.status << "\n";
        }
    return o.str();
}

} // namespace kvmgpu::bench
