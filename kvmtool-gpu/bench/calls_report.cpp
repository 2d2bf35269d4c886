#include "kvmtool-gpu/bench/calls_report.h"

#include <algorithm>
#include <cstdio>

#include "kvmtool-gpu/abi/console_tags.h"

namespace kvmgpu::bench {

double CallsResult::wall_per_call_ns() const {
    return ok() && calls ? static_cast<double>(wall_ns) / static_cast<double>(calls) : 0.0;
}

double CallsResult::event_per_call_ns() const {
    return ok() && calls ? static_cast<double>(event_ns) / static_cast<double>(calls) : 0.0;
}

double CallsResult::wall_min_per_call_ns() const {
    return ok() && calls ? static_cast<double>(wall_min_ns) / static_cast<double>(calls) : 0.0;
}

double CallsResult::wall_p90_per_call_ns() const {
    return ok() && calls ? static_cast<double>(wall_p90_ns) / static_cast<double>(calls) : 0.0;
}

std::optional<CallsResult> calls_from_line(const BenchLine& line, const std::string& doorbell) {
    if (line.tag != KVMGPU_TAG_CALLS) return std::nullopt;
    CallsResult r;
    r.key = {"guest", doorbell, line.get("batching"), line.get("metric")};
    r.status = line.get("status");
    const auto calls = line.u64("calls"), reps = line.u64("reps"), ev = line.u64("event_ns"),
               wall = line.u64("wall_ns");
    if (r.key.batching.empty() || r.key.metric.empty() || r.status.empty() || !calls || !reps || !ev || !wall)
        return std::nullopt;
    r.calls = *calls;
    r.reps = *reps;
    r.event_ns = *ev;
    r.wall_ns = *wall;
    // Lines from before the guest reported them: the median stands in.
    r.wall_min_ns = line.u64("wall_min_ns").value_or(*wall);
    r.wall_p90_ns = line.u64("wall_p90_ns").value_or(*wall);
    r.doorbells = line.u64("doorbells").value_or(0);
    r.waits = line.u64("waits").value_or(0);
    if (line.get("source") == "native") r.key.source = "native", r.key.doorbell = r.key.batching = "-";
    return r;
}

const CallsResult* native_calls_match(const std::vector<CallsResult>& all, const std::string& metric) {
    for (const auto& n : all)
        if (n.key.source == "native" && n.key.metric == metric && n.ok()) return &n;
    return nullptr;
}

std::optional<double> rate_ratio(const std::vector<CallsResult>& all, const CallsResult& r, bool by_events) {
    const CallsResult* n = native_calls_match(all, r.key.metric);
    if (!n || !r.ok()) return std::nullopt;
    const double g = by_events ? r.event_per_call_ns() : r.wall_per_call_ns();
    const double nat = by_events ? n->event_per_call_ns() : n->wall_per_call_ns();
    if (g <= 0 || nat <= 0) return std::nullopt;
    return nat / g;
}

std::optional<double> round_trip_excess_ns(const std::vector<CallsResult>& all, const CallsResult& r) {
    const CallsResult* n = native_calls_match(all, r.key.metric);
    if (!n || !r.ok()) return std::nullopt;
    return r.wall_per_call_ns() - n->wall_per_call_ns();
}

std::vector<CallsVerdict> calls_targets(const std::vector<CallsResult>& all) {
    std::vector<CallsVerdict> out;
    for (const auto& r : all) {
        if (r.key.source != "guest") continue;
        const CallsResult* n = native_calls_match(all, r.key.metric);
        const bool enough = r.reps >= kCallsVerdictReps && n && n->reps >= kCallsVerdictReps;
        // The guest's 90th-percentile run against native's median.
        const double g90 = r.wall_p90_per_call_ns(), nat = n ? n->wall_per_call_ns() : 0;
        const bool measured = r.ok() && n && g90 > 0 && nat > 0;
        if (is_async_metric(r.key.metric) && r.key.batching == "on") { // deferred submission
            const auto q = rate_ratio(all, r, false);
            const auto q90 = measured ? std::optional<double>(nat / g90) : std::nullopt;
            const bool judged = enough && q && q90;
            out.push_back({&r, "rate >= 95% of native", q, q90, judged, judged && *q >= 0.95 && *q90 >= 0.90});
            continue;
        }
        double limit_ns = 0;
        if (r.key.metric == "wake_launch" && r.key.doorbell == "adaptive")
            limit_ns = 5000;
        else if (!is_async_metric(r.key.metric) && r.key.metric != "wake_launch" &&
                 (r.key.doorbell == "adaptive" || r.key.doorbell == "poll"))
            limit_ns = 1000;
        else
            continue;
        const auto x = round_trip_excess_ns(all, r);
        const auto x90 = measured ? std::optional<double>(g90 - nat) : std::nullopt;
        const bool judged = enough && x && x90;
        out.push_back({&r, "<= native + " + std::string(limit_ns == 5000 ? "5" : "1.0") + " us", x, x90, judged,
                       judged && *x <= limit_ns && *x90 <= 2 * limit_ns});
    }
    return out;
}

std::string us_text(double ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ns >= 100000 ? "%.0f" : ns >= 10000 ? "%.1f" : "%.2f", ns / 1000);
    return buf;
}

// "+1.44" or "-1.69": a round trip above or below native.
static std::string excess_us_text(double ns) { return (ns < 0 ? "-" : "+") + us_text(ns < 0 ? -ns : ns); }

namespace {
constexpr auto num = number_text;
// Guest rows only: a native row against itself says nothing.
std::optional<double> versus_native(const std::vector<CallsResult>& all, const CallsResult& r) {
    if (r.key.source != "guest") return std::nullopt;
    return is_async_metric(r.key.metric) ? rate_ratio(all, r, false) : round_trip_excess_ns(all, r);
}
} // namespace

std::string calls_csv(const std::vector<CallsResult>& all) {
    std::string out = "source,mode,doorbell,batching,metric,calls,reps,event_ns,wall_ns,event_ns_per_call,"
                      "wall_ns_per_call,doorbells,waits,rate_vs_native,excess_ns_vs_native,status,"
                      "wall_min_ns_per_call,wall_p90_ns_per_call\n";
    for (const auto& r : all) {
        const auto& k = r.key;
        const bool async = is_async_metric(k.metric);
        const auto v = versus_native(all, r);
        out += k.source + "," + k.mode() + "," + k.doorbell + "," + k.batching + "," + k.metric + "," +
               std::to_string(r.calls) + "," + std::to_string(r.reps) + "," + std::to_string(r.event_ns) + "," +
               std::to_string(r.wall_ns) + "," + num(r.event_per_call_ns()) + "," + num(r.wall_per_call_ns()) + "," +
               std::to_string(r.doorbells) + "," + std::to_string(r.waits) + "," + (async && v ? num(*v) : "") +
               "," + (!async && v ? num(*v) : "") + "," + r.status + "," + num(r.wall_min_per_call_ns()) + "," +
               num(r.wall_p90_per_call_ns()) + "\n";
    }
    return out;
}

std::string calls_json(const std::vector<CallsResult>& all, const BenchMeta& meta) {
    return results_json(meta, all, [&](const CallsResult& r) {
        const auto& k = r.key;
        const auto v = versus_native(all, r);
        return Json{{"source", k.source}, {"mode", k.mode()}, {"doorbell", k.doorbell}, {"batching", k.batching},
                    {"metric", k.metric}, {"calls", r.calls}, {"reps", r.reps}, {"event_ns", r.event_ns},
                    {"wall_ns", r.wall_ns}, {"event_ns_per_call", r.event_per_call_ns()},
                    {"wall_ns_per_call", r.wall_per_call_ns()}, {"wall_min_ns_per_call", r.wall_min_per_call_ns()},
                    {"wall_p90_ns_per_call", r.wall_p90_per_call_ns()}, {"doorbells", r.doorbells}, {"waits", r.waits},
                    {is_async_metric(k.metric) ? "rate_vs_native" : "excess_ns_vs_native", v ? Json(*v) : Json()},
                    {"status", r.status}};
    });
}

std::string calls_markdown(const std::vector<CallsResult>& all, const BenchMeta& meta) {
    std::string out = "## kvmtool-gpu bench calls\n\n" + meta_markdown(meta);
    out += "- cells: us per call, guest wall / CUDA-event span; async metrics: (x%) = call rate of native by "
           "wall clock; round trips: (+x) = us above native\n";
    if (!meta.native_baseline) out += "- no native GPU baseline in this run: no ratios, no target verdicts\n";
    if (meta.guest_code_emulated)
        out += "- guest code is EMULATED here: guest wall times include the emulator's time for every guest "
               "instruction; the event span shows what the VMM and GPU side sustain\n";
    out += "\n| mode |";
    for (const auto& m : call_metrics()) out += " " + m + " |";
    out += " doorbells (launch) |\n| --- |";
    for (size_t i = 0; i <= call_metrics().size(); ++i) out += " ---: |";
    out += "\n";
    std::vector<std::string> modes;
    for (const auto& r : all)
        if (std::find(modes.begin(), modes.end(), r.key.mode()) == modes.end()) modes.push_back(r.key.mode());
    for (const auto& mode : modes) {
        out += "| " + mode + " |";
        std::string launch_bells = "";
        for (const auto& m : call_metrics()) {
            const CallsResult* r = nullptr;
            for (const auto& x : all)
                if (x.key.mode() == mode && x.key.metric == m) r = &x;
            std::string c;
            if (r && r->ok()) {
                c = us_text(r->wall_per_call_ns()) + " / " + us_text(r->event_per_call_ns());
                if (auto v = versus_native(all, *r))
                    c += is_async_metric(m) ? " (" + percent_text(*v) + ")" : " (" + excess_us_text(*v) + ")";
                if (m == "launch" && r->key.source == "guest") launch_bells = std::to_string(r->doorbells);
            } else if (r) {
                c = r->status;
            }
            out += " " + c + " |";
        }
        out += " " + launch_bells + " |\n";
    }
    out += "\n### Targets: asynchronous launch and loop rate with deferred submission (batching on) >= 95% of "
           "native; synchronous round trip with the adaptive and polling doorbells <= native + 1.0 us; with the "
           "adaptive doorbell, a round trip after a pause (wake_launch) <= native + 5 us. Judged on the median of "
           "at least " + std::to_string(kCallsVerdictReps) + " runs (--reps) on both sides; the guest's 90th "
           "percentile run must stay within twice the margin (rate >= 90%, +2.0 us, +10 us)\n\n";
    if (!meta.native_baseline) {
        out += "Not judged: no native GPU baseline in this run.\n";
        return out;
    }
    out += "| mode | metric | guest us/call (wall): min / median / p90 | native us/call | result (median) | "
           "p90 | target | verdict |\n| --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n";
    for (const auto& v : calls_targets(all)) {
        const auto& r = *v.result;
        const CallsResult* n = native_calls_match(all, r.key.metric);
        auto text = [&](const std::optional<double>& x) {
            return !x ? std::string("-") : is_async_metric(r.key.metric) ? percent_text(*x) : excess_us_text(*x) + " us";
        };
        const std::string guest = r.ok() ? us_text(r.wall_min_per_call_ns()) + " / " + us_text(r.wall_per_call_ns()) +
                                               " / " + us_text(r.wall_p90_per_call_ns())
                                         : r.status;
        const std::string verdict = v.met ? "met" : v.judged ? "MISSED" : v.value ? "not judged (reps < " + std::to_string(kCallsVerdictReps) + ")"
                                                                    : "n/a";
        out += "| " + r.key.mode() + " | " + r.key.metric + " | " + guest + " | " +
               (n ? us_text(n->wall_per_call_ns()) : "-") + " | " + text(v.value) + " | " + text(v.p90) + " | " +
               v.target + " | " + verdict + " |\n";
    }
    return out;
}

} // namespace kvmgpu::bench
