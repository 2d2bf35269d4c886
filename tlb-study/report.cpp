#include "tlb-study/report.h"

#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <map>
#include <set>
#include <stdexcept>

#include "tlb-study/json_writer.h"

namespace tlbstudy {

namespace {

std::string fmt(double v, int prec = 2) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", prec, v);
    return buf;
}

std::string page(PageSize p) { return std::string(memmap::to_string(p)); }

std::string native_label(PageSize p) { return "native " + page(p); }

// CSV field: quoted when it holds a comma, quote or newline.
std::string csv(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + '"';
}

struct CsvRow {
    std::string section, label, guest_pages, host_pages, bytes, metric, value, unit;
    bool emulated = false;
};

void emit(std::ostream& os, const CsvRow& r) {
    os << csv(r.section) << ',' << csv(r.label) << ',' << r.guest_pages << ',' << r.host_pages << ',' << r.bytes << ','
       << csv(r.metric) << ',' << r.value << ',' << r.unit << ',' << (r.emulated ? 1 : 0) << '\n';
}

std::string num(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// The value a statistic contributes to a table: the change for counters,
// the final value for gauges (instant, peak).
bool scalar_value(const kvmgpu::KvmStatChange& c, int64_t* v) {
    if (c.delta.size() != 1) return false;
    if (c.type == kvmgpu::KvmStatType::Cumulative) *v = c.delta[0];
    else if (c.type == kvmgpu::KvmStatType::Instant || c.type == kvmgpu::KvmStatType::Peak)
        *v = static_cast<int64_t>(c.after[0]);
    else return false;
    return true;
}

void json_stats(JsonWriter& j, const kvmgpu::KvmStatsDiff& d) {
    j.begin_object();
    for (const auto& [name, c] : d) {
        j.key(name).begin_object();
        j.field("type", std::string(kvmgpu::to_string(c.type)));
        if (c.unit != kvmgpu::KvmStatUnit::None) j.field("unit", std::string(kvmgpu::to_string(c.unit)));
        if (c.exponent != 0) j.field("exponent", int64_t{c.exponent});
        if (c.delta.size() == 1) {
            j.field("before", c.before[0]).field("after", c.after[0]).field("delta", c.delta[0]);
        } else {
            j.key("delta").begin_array();
            for (int64_t v : c.delta) j.value(v);
            j.end_array();
        }
        j.end_object();
    }
    j.end_object();
}

void json_counters(JsonWriter& j, const std::vector<CounterValue>& cs) {
    j.begin_object();
    for (const auto& c : cs) j.field(c.metric, c.value);
    j.end_object();
}

// Statistics shown in the markdown summary, when the kernel has them.
const std::vector<std::pair<std::string, std::string>>& summary_stats() {
    static const std::vector<std::pair<std::string, std::string>> s = {
        {"vcpu", "exits"},     {"vcpu", "mmio_exits"}, {"vcpu", "io_exits"},       {"vcpu", "pf_taken"},
        {"vcpu", "pf_fixed"},  {"vcpu", "pf_emulate"}, {"vcpu", "pf_guest"},       {"vcpu", "tlb_flush"},
        {"vcpu", "insn_emulation"}, {"vm", "pages_4k"}, {"vm", "pages_2m"},        {"vm", "pages_1g"},
        {"vm", "remote_tlb_flush"},
    };
    return s;
}

// One column of a table indexed by working set: header, and the cell for
// a working set (nullopt: not measured there, shown as a dash).
struct WsColumn {
    std::string header;
    std::function<std::optional<std::string>(uint64_t ws)> cell;
};

// Rows only for working sets with at least one measured cell; nothing at
// all without columns.
void ws_table(std::ostream& os, const std::vector<uint64_t>& working_sets, const std::vector<WsColumn>& cols) {
    if (cols.empty()) return;
    os << "| working set |";
    for (const auto& c : cols) os << ' ' << c.header << " |";
    os << "\n| ---: |";
    for (size_t i = 0; i < cols.size(); ++i) os << " ---: |";
    os << '\n';
    for (uint64_t ws : working_sets) {
        std::string row = "| " + size_label(ws) + " |";
        bool any = false;
        for (const auto& c : cols) {
            const auto v = c.cell(ws);
            any |= v.has_value();
            row += ' ' + v.value_or("—") + " |";
        }
        if (any) os << row << '\n';
    }
    os << '\n';
}

} // namespace

void write_csv(const StudyResults& r, std::ostream& os) {
    os << "section,label,guest_pages,host_pages,bytes,metric,value,unit,emulated\n";
    const bool nemu = r.machine.native_emulated;
    for (const auto& n : r.native) {
        for (const auto& p : n.points) {
            const std::string ws = std::to_string(p.ws);
            emit(os, {"native_chase", native_label(n.pages), "", page(n.pages), ws, "ns_per_access", num(p.ns_per_access), "ns", nemu});
            emit(os, {"native_chase", native_label(n.pages), "", page(n.pages), ws, "ns_min_per_access", num(p.ns_min), "ns", nemu});
            const double per = double(p.accesses) * p.reps;
            for (const auto& c : p.counters)
                emit(os, {"native_chase", native_label(n.pages), "", page(n.pages), ws, c.metric + "_per_access",
                          num(double(c.value) / per), "events", nemu});
        }
    }
    const bool gemu = r.machine.guest_code_emulated || nemu;
    for (const auto& g : r.guest) {
        const std::string gp = page(g.run.guest_pages), hp = page(g.run.host_pages), label = g.run.label();
        for (const auto& l : g.lines) {
            const std::string ws = std::to_string(l.ws);
            emit(os, {"guest_chase", label, gp, hp, ws, "ns_per_access", num(l.ns_per_access()), "ns", gemu});
            emit(os, {"guest_chase", label, gp, hp, ws, "ns_min_per_access", num(l.ns_min_per_access()), "ns", gemu});
            emit(os, {"guest_chase", label, gp, hp, ws, "tsc_per_access", num(double(l.tsc) / double(l.accesses)), "ticks", gemu});
        }
        for (const auto& c : g.counters)
            emit(os, {"guest_counters", label, gp, hp, "", c.metric, std::to_string(c.value), "events", gemu});
        for (const auto* part : {&g.vm_stats, &g.vcpu_stats}) {
            const std::string prefix = part == &g.vm_stats ? "vm." : "vcpu.";
            for (const auto& [name, c] : *part) {
                int64_t v;
                if (scalar_value(c, &v))
                    emit(os, {"kvm_stats", label, gp, hp, "", prefix + name, std::to_string(v),
                              c.is_counter() ? "delta" : "final", gemu});
            }
        }
    }
    for (const auto& t : r.translate) {
        const std::string label = "regions=" + std::to_string(t.regions);
        emit(os, {"translate", label, "", "", "", "ns_per_lookup", num(t.ns_per_lookup), "ns", nemu});
        emit(os, {"translate", label, "", "", "", "lookups_per_s", num(t.lookups_per_s()), "1/s", nemu});
    }
    for (const auto& s : r.sg) {
        const std::string gp = page(s.guest_pages), b = std::to_string(s.transfer), label = s.label();
        emit(os, {"sg", label, gp, "", b, "entries", std::to_string(s.entries), "count", nemu});
        emit(os, {"sg", label, gp, "", b, "runs", std::to_string(s.runs), "count", nemu});
        emit(os, {"sg", label, gp, "", b, "coalesce_ns", num(s.coalesce_ns), "ns", nemu});
        emit(os, {"sg", label, gp, "", b, "translate_each_ns", num(s.translate_each_ns), "ns", nemu});
    }
    for (const auto& b : r.backing) {
        if (!b.error.empty()) continue;
        const std::string hp = page(b.pages), by = std::to_string(b.bytes), label = "backing " + hp;
        emit(os, {"backing", label, "", hp, by, "create_ms_per_gib", num(b.per_gib(b.create_ms)), "ms", nemu});
        emit(os, {"backing", label, "", hp, by, "prefault_ms_per_gib", num(b.per_gib(b.prefault_ms)), "ms", nemu});
        emit(os, {"backing", label, "", hp, by, "touch_ms_per_gib", num(b.per_gib(b.touch_ms)), "ms", nemu});
    }
}

void write_json(const StudyResults& r, std::ostream& os) {
    JsonWriter j(os);
    const MachineInfo& m = r.machine;
    j.begin_object();
    j.key("machine").begin_object();
    j.field("date_utc", m.date_utc).field("hostname", m.hostname).field("cpu_model", m.cpu_model);
    j.field("cpus", uint64_t{m.cpus}).field("mem_total_bytes", m.mem_total).field("os", m.os);
    j.field("kernel", m.kernel).field("transparent_hugepage", m.thp).field("huge_page_pools", m.pools);
    j.field("host_virtualized", m.host_virtualized).field("host_hypervisor", m.host_hypervisor);
    j.field("native_emulated", m.native_emulated).field("native_note", m.native_note);
    j.field("kvm", m.kvm).field("kvm_note", m.kvm_note).field("kvm_flavor", m.kvm_flavor);
    j.field("guest_code_emulated", m.kvm && m.guest_code_emulated).field("guest_code", m.guest_code);
    j.field("pmu", m.pmu).field("pmu_note", m.pmu_note).field("pmu_events", m.pmu_events);
    j.end_object();

    const SweepPlan& p = r.plan;
    j.key("plan").begin_object();
    j.key("working_sets").begin_array();
    for (uint64_t w : p.working_sets) j.value(w);
    j.end_array();
    j.field("reps", p.reps).field("native_accesses", p.accesses).field("guest_accesses", p.guest_accesses);
    j.field("seed", r.native_params.seed).field("guest_skip", p.guest_skip);
    j.key("skips").begin_array();
    for (const auto& n : p.native)
        if (!n.skip.empty() || !n.note.empty()) j.value(native_label(n.pages) + ": " + (n.skip.empty() ? n.note : n.skip));
    for (const auto& g : p.guest)
        if (!g.skip.empty() || !g.note.empty()) j.value(g.label() + ": " + (g.skip.empty() ? g.note : g.skip));
    for (const auto& s : p.backing_skips) j.value("backing " + s);
    j.end_array();
    j.end_object();

    j.key("native_chase").begin_array();
    for (const auto& n : r.native) {
        j.begin_object().field("pages", page(n.pages)).field("source", n.source);
        if (!n.skip.empty()) j.field("skip", n.skip);
        if (!n.note.empty()) j.field("note", n.note);
        if (!n.error.empty()) j.field("error", n.error);
        j.key("points").begin_array();
        for (const auto& pt : n.points) {
            j.begin_object().field("ws", pt.ws).field("accesses", pt.accesses).field("reps", pt.reps);
            j.field("ns_per_access", pt.ns_per_access).field("ns_min", pt.ns_min);
            if (!pt.counters.empty()) {
                j.key("counters");
                json_counters(j, pt.counters);
            }
            j.end_object();
        }
        j.end_array().end_object();
    }
    j.end_array();

    j.key("guest_chase").begin_object();
    j.field("emulated", m.kvm && (m.guest_code_emulated || m.native_emulated));
    j.field("guest", r.guest_params.guest_path);
    j.key("runs").begin_array();
    for (const auto& g : r.guest) {
        j.begin_object().field("label", g.run.label());
        j.field("guest_pages", page(g.run.guest_pages)).field("host_pages", page(g.run.host_pages));
        j.field("ram_bytes", g.run.ram_bytes);
        if (!g.run.skip.empty()) j.field("skip", g.run.skip);
        if (!g.run.note.empty()) j.field("note", g.run.note);
        j.field("ok", g.ok);
        if (!g.error.empty() && g.run.skip.empty()) j.field("error", g.error);
        j.field("wall_s", g.wall_s).field("exits", g.exits);
        j.key("points").begin_array();
        for (const auto& l : g.lines) {
            j.begin_object().field("ws", l.ws).field("pages", l.pages).field("accesses", l.accesses);
            j.field("reps", l.reps).field("tsc", l.tsc).field("tsc_min", l.tsc_min).field("tsc_khz", l.tsc_khz);
            j.field("ns_per_access", l.ns_per_access()).end_object();
        }
        j.end_array();
        if (!g.counters.empty()) {
            j.key("counters");
            json_counters(j, g.counters);
        }
        if (!g.stats_note.empty()) j.field("kvm_stats_note", g.stats_note);
        j.key("kvm_stats_vm");
        json_stats(j, g.vm_stats);
        j.key("kvm_stats_vcpu");
        json_stats(j, g.vcpu_stats);
        j.end_object();
    }
    j.end_array().end_object();

    j.key("translation").begin_object();
    j.key("translate").begin_array();
    for (const auto& t : r.translate)
        j.begin_object().field("regions", t.regions).field("lookups", t.lookups).field("ns_per_lookup", t.ns_per_lookup)
            .field("lookups_per_s", t.lookups_per_s()).end_object();
    j.end_array();
    j.key("sg").begin_array();
    for (const auto& s : r.sg)
        j.begin_object().field("list", s.label()).field("guest_pages", page(s.guest_pages)).field("shuffled", s.shuffled)
            .field("transfer", s.transfer).field("entries", s.entries).field("runs", s.runs)
            .field("coalesce_ns", s.coalesce_ns).field("translate_each_ns", s.translate_each_ns).end_object();
    j.end_array();
    j.key("backing").begin_array();
    for (const auto& b : r.backing) {
        j.begin_object().field("pages", page(b.pages)).field("source", b.source).field("bytes", b.bytes);
        if (!b.error.empty()) j.field("error", b.error);
        else j.field("create_ms", b.create_ms).field("prefault_ms", b.prefault_ms).field("touch_ms", b.touch_ms);
        j.end_object();
    }
    j.end_array();
    j.key("backing_skips").begin_array();
    for (const auto& s : p.backing_skips) j.value(s);
    j.end_array();
    j.end_object();
    j.field("elapsed_s", r.elapsed_s);
    j.end_object();
}

void write_markdown(const StudyResults& r, std::ostream& os) {
    const MachineInfo& m = r.machine;
    const SweepPlan& p = r.plan;
    os << "## kvmtool-gpu bench tlb\n\n| | |\n| --- | --- |\n";
    os << "| date | " << m.date_utc << " |\n";
    os << "| machine | " << m.cpu_model << ", " << m.cpus << " CPUs, " << fmt(double(m.mem_total) / double(1ull << 30), 1)
       << " GiB RAM" << (m.hostname.empty() || m.hostname == "(none)" ? "" : " (" + m.hostname + ")") << " |\n";
    os << "| OS, kernel | " << (m.os.empty() ? "" : m.os + ", ") << m.kernel << " |\n";
    os << "| native code | " << m.native_note << " |\n";
    os << "| KVM | " << (m.kvm ? m.kvm_flavor : "none: " + m.kvm_note) << " |\n";
    if (m.kvm)
        os << "| guest code | " << m.guest_code
           << (m.guest_code_emulated || m.native_emulated ? " — EMULATED: guest latencies measure the emulator, not TLB cost"
                                                          : "")
           << " |\n";
    os << "| PMU | " << (m.pmu ? m.pmu_events + (m.pmu_note.empty() ? "" : "; " + m.pmu_note) : m.pmu_note) << " |\n";
    os << "| huge pages | " << m.pools << "; THP " << m.thp << " (4K buffers refuse THP) |\n";
    if (!p.working_sets.empty())
        os << "| sweep | " << size_label(p.working_sets.front()) << " .. " << size_label(p.working_sets.back()) << ", "
           << p.working_sets.size() << " working sets; median of " << p.reps << " reps of " << p.accesses
           << " accesses (guest " << p.guest_accesses << ") |\n";
    os << "| elapsed | " << fmt(r.elapsed_s, 1) << " s |\n\n";

    // Native chase: one column per page size that ran, then counter columns.
    os << "### Native pointer chase, ns per access (one dependent load per 4 KiB page, random order)\n\n";
    std::vector<WsColumn> cols;
    for (const auto& n : r.native) {
        if (n.points.empty()) continue;
        cols.push_back({page(n.pages) + " pages", [&n](uint64_t ws) -> std::optional<std::string> {
                            for (const auto& pt : n.points)
                                if (pt.ws == ws) return fmt(pt.ns_per_access);
                            return std::nullopt;
                        }});
    }
    for (const auto& n : r.native) {
        if (n.points.empty()) continue;
        for (const auto& metric : r.counter_metrics)
            cols.push_back({page(n.pages) + ' ' + metric + "/access", [&n, metric](uint64_t ws) -> std::optional<std::string> {
                                for (const auto& pt : n.points)
                                    if (pt.ws == ws)
                                        if (auto v = find_value(pt.counters, metric))
                                            return fmt(double(*v) / (double(pt.accesses) * pt.reps), 3);
                                return std::nullopt;
                            }});
    }
    ws_table(os, p.working_sets, cols);
    for (const auto& n : r.native) {
        if (!n.skip.empty()) os << "- " << page(n.pages) << ": " << n.skip << '\n';
        if (!n.note.empty()) os << "- " << page(n.pages) << ": " << n.note << '\n';
        if (!n.error.empty()) os << "- " << page(n.pages) << ": ERROR: " << n.error << '\n';
    }
    if (!m.pmu) os << "- counters: " << m.pmu_note << '\n';
    os << '\n';

    // Guest chase: one column per combination that printed results.
    os << "### Guest pointer chase, ns per access (guest TSC)";
    if (m.kvm && (m.guest_code_emulated || m.native_emulated))
        os << " — EMULATED (" << m.kvm_flavor << "): emulator cost per access, NOT a TLB cost";
    os << "\n\n";
    if (!p.guest_skip.empty()) os << "- " << p.guest_skip << "\n\n";
    std::vector<WsColumn> gcols;
    for (const auto& g : r.guest) {
        if (g.lines.empty()) continue;
        gcols.push_back({g.run.label(), [&g](uint64_t ws) -> std::optional<std::string> {
                             for (const auto& l : g.lines)
                                 if (l.ws == ws) return fmt(l.ns_per_access(), 1);
                             return std::nullopt;
                         }});
    }
    ws_table(os, p.working_sets, gcols);
    for (const auto& g : r.guest) {
        if (!g.run.skip.empty()) os << "- " << g.run.label() << ": " << g.run.skip << '\n';
        else if (!g.ok) os << "- " << g.run.label() << ": FAILED: " << g.error << '\n';
        if (!g.run.note.empty()) os << "- " << g.run.label() << ": " << g.run.note << '\n';
    }

    // KVM statistics, one row per guest run that ran.
    bool any_stats = false;
    for (const auto& g : r.guest) any_stats |= !g.vm_stats.empty() || !g.vcpu_stats.empty() || !g.stats_note.empty();
    if (any_stats) {
        std::vector<std::pair<std::string, std::string>> shown;
        for (const auto& s : summary_stats())
            for (const auto& g : r.guest) {
                const auto& d = s.first == "vm" ? g.vm_stats : g.vcpu_stats;
                if (d.count(s.second)) {
                    shown.push_back(s);
                    break;
                }
            }
        os << "\n### KVM statistics per guest run (counters: change over the run; pages_*: at the end)\n\n";
        os << "| run | wall s | exits (VMM) |";
        for (const auto& s : shown) os << ' ' << s.second << " |";
        os << "\n| --- | ---: | ---: |";
        for (size_t i = 0; i < shown.size(); ++i) os << " ---: |";
        os << '\n';
        for (const auto& g : r.guest) {
            if (!g.run.skip.empty()) continue;
            os << "| " << g.run.label() << " | " << fmt(g.wall_s, 2) << " | " << g.exits << " |";
            for (const auto& s : shown) {
                const auto& d = s.first == "vm" ? g.vm_stats : g.vcpu_stats;
                const auto it = d.find(s.second);
                int64_t v;
                os << ' ' << (it != d.end() && scalar_value(it->second, &v) ? std::to_string(v) : "—") << " |";
            }
            os << '\n';
            if (!g.stats_note.empty()) os << "| " << g.run.label() << ": " << g.stats_note << " |\n";
        }
    }

    // VMM translation work.
    os << "\n### VMM translation work (host side, no VM)\n\n";
    os << "| GuestMemory regions | ns per translate() | lookups/s |\n| ---: | ---: | ---: |\n";
    for (const auto& t : r.translate)
        os << "| " << t.regions << " | " << fmt(t.ns_per_lookup) << " | " << fmt(t.lookups_per_s() / 1e6, 1) << " M |\n";
    os << "\n| guest frames | transfer | SG entries | host runs after coalesce | coalesce µs | ns per entry | "
          "translate_each µs |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const auto& s : r.sg)
        os << "| " << s.label() << " | " << size_label(s.transfer) << " | " << s.entries << " | " << s.runs << " | "
           << fmt(s.coalesce_ns / 1e3, 1) << " | " << fmt(s.coalesce_ns / double(s.entries ? s.entries : 1), 1) << " | "
           << fmt(s.translate_each_ns / 1e3, 1) << " |\n";
    os << "\n| backing | source | size | mmap ms/GiB | prefault ms/GiB | first touch ms/GiB |\n"
          "| --- | --- | ---: | ---: | ---: | ---: |\n";
    for (const auto& b : r.backing) {
        if (!b.error.empty()) {
            os << "| " << page(b.pages) << " | ERROR: " << b.error << " | | | | |\n";
            continue;
        }
        os << "| " << page(b.pages) << " | " << b.source << " | " << size_label(b.bytes) << " | "
           << fmt(b.per_gib(b.create_ms), 3) << " | " << fmt(b.per_gib(b.prefault_ms), 1) << " | "
           << fmt(b.per_gib(b.touch_ms), 1) << " |\n";
    }
    for (const auto& s : p.backing_skips) os << "- backing " << s << '\n';
    os << '\n';
}

void write_file(const std::string& path, const StudyResults& r, void (*writer)(const StudyResults&, std::ostream&)) {
    std::ofstream f(path);
    if (!f) throw std::runtime_error("cannot write " + path);
    writer(r, f);
    f.flush();
    if (!f) throw std::runtime_error("error writing " + path);
}

} // namespace tlbstudy
