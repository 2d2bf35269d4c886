#include "tlb-study/guest_chase.h"

#include <chrono>
#include <cstdio>
#include <exception>

#include "kvmtool-gpu/abi/console_tags.h"
#include "kvmtool-gpu/kvm/kvm_system.h"
#include "kvmtool-gpu/vmm/virtual_machine.h"

namespace tlbstudy {

namespace {

bool parse_u64(std::string_view s, uint64_t* out) {
    if (s.empty() || s.size() > 20) return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, uint64_t(c - '0'), &v)) return false;
    }
    *out = v;
    return true;
}

} // namespace

double ChaseLine::ns_per_access() const {
    return accesses && tsc_khz ? double(tsc) * 1e6 / double(tsc_khz) / double(accesses) : 0;
}

double ChaseLine::ns_min_per_access() const {
    return accesses && tsc_khz ? double(tsc_min) * 1e6 / double(tsc_khz) / double(accesses) : 0;
}

std::optional<ChaseLine> parse_chase_line(std::string_view line) {
    constexpr std::string_view kTag = KVMGPU_TAG_CHASE " ";
    if (line.substr(0, kTag.size()) != kTag) return std::nullopt;
    line.remove_prefix(kTag.size());
    ChaseLine c;
    struct Field {
        std::string_view key;
        uint64_t* slot;
        bool required, seen;
    } fields[] = {{"ws", &c.ws, true, false},           {"nodes", &c.nodes, false, false},
                  {"accesses", &c.accesses, true, false}, {"reps", &c.reps, false, false},
                  {"tsc", &c.tsc, true, false},         {"tsc_min", &c.tsc_min, false, false},
                  {"tsc_khz", &c.tsc_khz, true, false}};
    while (!line.empty()) {
        const size_t sp = line.find(' ');
        const std::string_view word = line.substr(0, sp);
        line = sp == std::string_view::npos ? std::string_view{} : line.substr(sp + 1);
        if (word.empty()) continue;
        const size_t eq = word.find('=');
        if (eq == std::string_view::npos) return std::nullopt;
        const std::string_view key = word.substr(0, eq), val = word.substr(eq + 1);
        if (key == "pages") {
            c.pages = std::string(val);
            continue;
        }
        for (Field& f : fields) {
            if (f.key != key) continue; // unknown keys: a later guest may add some
            if (!parse_u64(val, f.slot)) return std::nullopt;
            f.seen = true;
        }
    }
    for (const Field& f : fields)
        if (f.required && !f.seen) return std::nullopt;
    if (c.ws == 0 || c.accesses == 0 || c.tsc_khz == 0) return std::nullopt;
    return c;
}

std::string guest_cmdline(const GuestRun& run, const GuestChaseParams& p) {
    std::string ws;
    for (uint64_t w : run.ws) ws += (ws.empty() ? "" : ",") + size_label(w);
    return "guest_pages=" + std::string(memmap::to_string(run.guest_pages)) + " chase_ws=" + ws +
           " chase_accesses=" + std::to_string(p.accesses) + " chase_reps=" + std::to_string(p.reps) +
           " chase_seed=" + std::to_string(p.seed);
}

GuestChaseResult run_guest_chase(const kvmgpu::KvmSystem& kvm, const GuestRun& run, const GuestChaseParams& params,
                                 PerfCounterSet* counters, const Progress& progress) {
    GuestChaseResult res;
    res.run = run;
    if (!run.skip.empty() || run.ws.empty()) {
        res.error = run.skip.empty() ? "no working sets" : run.skip;
        return res;
    }
    std::vector<std::string> tail; // the guest's last lines, for a failure message
    kvmgpu::VmOptions o;
    o.ram_bytes = run.ram_bytes;
    o.host_pages = run.host_pages;
    o.prefault = true; // host faults stay out of the guest's timings
    o.guest_path = params.guest_path;
    o.cmdline = guest_cmdline(run, params);
    o.timeout_s = params.timeout_s;
    o.seed = params.seed;
    o.console = [&](std::string_view line) {
        if (auto c = parse_chase_line(line)) {
            if (progress) {
                char buf[160];
                std::snprintf(buf, sizeof buf, "%s ws=%s: %.1f ns/access (guest TSC)", run.label().c_str(),
                              size_label(c->ws).c_str(), c->ns_per_access());
                progress(buf);
            }
            res.lines.push_back(*c);
        }
        tail.emplace_back(line);
        if (tail.size() > 4) tail.erase(tail.begin());
    };

    const auto t0 = std::chrono::steady_clock::now();
    try {
        kvmgpu::VirtualMachine vm(kvm, o);
        kvmgpu::KvmStatsReader vm_reader(vm.vm_fd().stats_fd(), "VM stats");
        kvmgpu::KvmStatsReader vcpu_reader(vm.vcpu().stats_fd(), "vCPU stats");
        const auto vm_before = vm_reader.snapshot();
        const auto vcpu_before = vcpu_reader.snapshot();
        const bool count = counters != nullptr && counters->available();
        if (count) counters->start();
        const kvmgpu::RunResult r = vm.run();
        res.execution = r.execution;
        if (count) {
            counters->stop();
            res.counters = counters->read();
        }
        const auto vm_after = vm_reader.snapshot();
        const auto vcpu_after = vcpu_reader.snapshot();
        if (vm_before && vm_after) res.vm_stats = kvmgpu::diff(*vm_before, *vm_after);
        else res.stats_note = vm_reader.error();
        if (vcpu_before && vcpu_after) res.vcpu_stats = kvmgpu::diff(*vcpu_before, *vcpu_after);
        else res.stats_note += (res.stats_note.empty() ? "" : "; ") + vcpu_reader.error();
        res.exits = r.exits.total;
        res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!r.passed()) {
            res.error = std::string(kvmgpu::to_string(r.outcome)) + ": " + r.detail;
            for (const auto& l : tail) res.error += " | " + l;
        } else if (res.lines.size() != run.ws.size()) {
            res.error = "guest printed " + std::to_string(res.lines.size()) + " CHASE lines for " +
                        std::to_string(run.ws.size()) + " working sets";
        } else {
            res.ok = true;
        }
    } catch (const std::exception& e) {
        res.error = e.what();
    }
    return res;
}

} // namespace tlbstudy
