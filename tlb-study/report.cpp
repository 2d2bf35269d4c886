#include "tlb-study/report.h"

#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <map>
#include <set>
#include <stdexcept>

#include "kvmtool-gpu/util/json.h"

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

kvmgpu::Json json_stats(const kvmgpu::KvmStatsDiff& d) {
    kvmgpu::Json out = kvmgpu::Json::object();
    for (const auto& [name, c] : d) {
        kvmgpu::Json& st = out[name];
        st["type"] = kvmgpu::to_string(c.type);
        if (c.unit != kvmgpu::KvmStatUnit::None) st["unit"] = kvmgpu::to_string(c.unit);
        if (c.exponent != 0) st["exponent"] = int64_t{c.exponent};
        if (c.delta.size() == 1) {
            st["before"] = c.before[0], st["after"] = c.after[0], st["delta"] = c.delta[0];
        } else {
            st["delta"] = c.delta;
        }
    }
    return out;
}

kvmgpu::Json json_counters(const std::vector<CounterValue>& cs) {
    kvmgpu::Json out = kvmgpu::Json::object();
    for (const auto& c : cs) out[c.metric] = c.value;
    return out;
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
    using kvmgpu::Json;
    const kvmgpu::MachineInfo& m = r.machine;
    Json doc;
    doc["machine"] = {{"date_utc", m.date_utc}, {"hostname", m.hostname}, {"cpu_model", m.cpu_model},
                      {"cpus", m.cpus}, {"mem_total_bytes", m.mem_total}, {"os", m.os}, {"kernel", m.kernel},
                      {"transparent_hugepage", m.thp}, {"huge_page_pools", m.pools},
                      {"host_virtualized", m.host_virtualized}, {"host_hypervisor", m.host_hypervisor},
                      {"native_emulated", m.native_emulated}, {"native_note", m.native_note}, {"kvm", m.kvm},
                      {"kvm_note", m.kvm_note}, {"kvm_flavor", m.kvm_flavor},
                      {"guest_code_emulated", m.kvm && m.guest_code_emulated}, {"guest_code", m.guest_code},
                      {"pmu", m.pmu}, {"pmu_note", m.pmu_note}, {"pmu_events", m.pmu_events}};

    const SweepPlan& p = r.plan;
    Json skips = Json::array();
    for (const auto& n : p.native)
        if (!n.skip.empty() || !n.note.empty()) skips.push_back(native_label(n.pages) + ": " + (n.skip.empty() ? n.note : n.skip));
    for (const auto& g : p.guest)
        if (!g.skip.empty() || !g.note.empty()) skips.push_back(g.label() + ": " + (g.skip.empty() ? g.note : g.skip));
    for (const auto& s : p.backing_skips) skips.push_back("backing " + s);
    doc["plan"] = {{"working_sets", p.working_sets}, {"reps", p.reps}, {"native_accesses", p.accesses},
                   {"guest_accesses", p.guest_accesses}, {"seed", r.native_params.seed},
                   {"guest_skip", p.guest_skip}, {"skips", skips}};

    Json& native = doc["native_chase"] = Json::array();
    for (const auto& n : r.native) {
        Json o = {{"pages", page(n.pages)}, {"source", n.source}};
        if (!n.skip.empty()) o["skip"] = n.skip;
        if (!n.note.empty()) o["note"] = n.note;
        if (!n.error.empty()) o["error"] = n.error;
        Json& points = o["points"] = Json::array();
        for (const auto& pt : n.points) {
            Json q = {{"ws", pt.ws}, {"accesses", pt.accesses}, {"reps", pt.reps}, {"ns_per_access", pt.ns_per_access},
                      {"ns_min", pt.ns_min}};
            if (!pt.counters.empty()) q["counters"] = json_counters(pt.counters);
            points.push_back(std::move(q));
        }
        native.push_back(std::move(o));
    }

    Json runs = Json::array();
    for (const auto& g : r.guest) {
        Json o = {{"label", g.run.label()}, {"guest_pages", page(g.run.guest_pages)},
                  {"host_pages", page(g.run.host_pages)}, {"ram_bytes", g.run.ram_bytes}};
        if (!g.run.skip.empty()) o["skip"] = g.run.skip;
        if (!g.run.note.empty()) o["note"] = g.run.note;
        o["ok"] = g.ok;
        if (!g.error.empty() && g.run.skip.empty()) o["error"] = g.error;
        o["wall_s"] = g.wall_s, o["exits"] = g.exits;
        Json& points = o["points"] = Json::array();
        for (const auto& l : g.lines)
            points.push_back({{"ws", l.ws}, {"pages", l.pages}, {"accesses", l.accesses}, {"reps", l.reps},
                              {"tsc", l.tsc}, {"tsc_min", l.tsc_min}, {"tsc_khz", l.tsc_khz},
                              {"ns_per_access", l.ns_per_access()}});
        if (!g.counters.empty()) o["counters"] = json_counters(g.counters);
        if (!g.stats_note.empty()) o["kvm_stats_note"] = g.stats_note;
        o["kvm_stats_vm"] = json_stats(g.vm_stats);
        o["kvm_stats_vcpu"] = json_stats(g.vcpu_stats);
        runs.push_back(std::move(o));
    }
    doc["guest_chase"] = {{"emulated", m.kvm && (m.guest_code_emulated || m.native_emulated)},
                          {"guest", r.guest_params.guest_path}, {"runs", runs}};

    Json translate = Json::array(), sg = Json::array(), backing = Json::array();
    for (const auto& t : r.translate)
        translate.push_back({{"regions", t.regions}, {"lookups", t.lookups}, {"ns_per_lookup", t.ns_per_lookup},
                             {"lookups_per_s", t.lookups_per_s()}});
    for (const auto& s : r.sg)
        sg.push_back({{"list", s.label()}, {"guest_pages", page(s.guest_pages)}, {"shuffled", s.shuffled},
                      {"transfer", s.transfer}, {"entries", s.entries}, {"runs", s.runs},
                      {"coalesce_ns", s.coalesce_ns}, {"translate_each_ns", s.translate_each_ns}});
    for (const auto& b : r.backing) {
        Json o = {{"pages", page(b.pages)}, {"source", b.source}, {"bytes", b.bytes}};
        if (!b.error.empty()) o["error"] = b.error;
        else o["create_ms"] = b.create_ms, o["prefault_ms"] = b.prefault_ms, o["touch_ms"] = b.touch_ms;
        backing.push_back(std::move(o));
    }
    doc["translation"] = {{"translate", translate}, {"sg", sg}, {"backing", backing},
                          {"backing_skips", p.backing_skips}};
    doc["elapsed_s"] = r.elapsed_s;
    os << kvmgpu::json_text(doc);
}

void write_markdown(const StudyResults& r, std::ostream& os) {
    const kvmgpu::MachineInfo& m = r.machine;
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
