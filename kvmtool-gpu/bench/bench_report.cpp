#include "kvmtool-gpu/bench/bench_report.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "kvmtool-gpu/kvm/kvm_flavor.h"
#include "kvmtool-gpu/vmm/machine_info.h"
#include "kvmtool-gpu/util/plot_runner.h"

namespace kvmgpu::bench {

void BenchMeta::set(const std::string& key, const std::string& value) {
    for (auto& [k, v] : fields)
        if (k == key) return void(v = value);
    fields.emplace_back(key, value);
}

std::string BenchMeta::get(const std::string& key) const {
    for (const auto& [k, v] : fields)
        if (k == key) return v;
    return {};
}

BenchMeta collect_bench_meta(const std::string& bench, const std::vector<std::string>& args) {
    const MachineInfo mi = collect_machine_info();
    const KvmFlavor f = detect_kvm_flavor();
    BenchMeta m;
    m.set("bench", bench);
    m.set("date_utc", mi.date_utc);
    m.set("hostname", mi.hostname);
    m.set("cpu", mi.cpu_model + ", " + std::to_string(mi.cpus) + " cores");
    m.set("kernel", mi.kernel);
    m.set("native", mi.native_note);
    m.set("kvm", f.describe());
    m.set("kvm_nested", f.nested ? "yes" : "no");
    m.set("guest_code", "not measured (no guest ran)");
    m.set("hugepages", mi.pools);
    std::string cmd = "kvmtool-gpu bench " + bench;
    for (const auto& a : args) cmd += " " + a;
    m.set("command", cmd);
    m.nested = f.nested;
    return m;
}

BenchMeta start_bench(const std::string& bench, const std::vector<std::string>& args, const std::string& wall_meaning) {
    BenchMeta m = collect_bench_meta(bench, args);
    m.wall_meaning = wall_meaning;
    m.set("guest_wall", "guest wall: " + wall_meaning);
    std::printf("bench %s: %s\n", bench.c_str(), m.get("kvm").c_str());
    std::fflush(stdout);
    return m;
}

void record_guest_execution(BenchMeta* m, const ExecutionMode& e) {
    if (!e.measured) return;
    const bool first = !m->guest_code_measured, turned = e.emulated() && !m->guest_code_emulated;
    m->guest_code_measured = true;
    m->guest_code_emulated = m->guest_code_emulated || e.emulated();
    if (!first && !turned) return;
    m->set("guest_code", e.describe());
    m->set("guest_wall", (m->guest_code_emulated ? "guest wall (EMULATED guest code: emulator times): " : "guest wall: ") +
                             m->wall_meaning);
    std::printf("bench: guest code %s\n", e.describe().c_str());
    std::fflush(stdout);
}

Json meta_json(const BenchMeta& m) {
    Json out = Json::object();
    for (const auto& [k, v] : m.fields) out[k] = v;
    return out;
}

std::string meta_markdown(const BenchMeta& m) {
    std::string out;
    for (const auto& [k, v] : m.fields) out += "- " + k + ": " + v + "\n";
    return out;
}

std::string rate_text(double gbps) {
    char buf[32];
    std::snprintf(buf, sizeof buf, gbps >= 100 ? "%.0f" : gbps >= 10 ? "%.1f" : gbps >= 1 ? "%.2f" : "%.3f", gbps);
    return buf;
}

std::string percent_text(double ratio) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", ratio * 100);
    return buf;
}

std::string number_text(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

void make_result_dir(const std::string& dir) {
    std::string path;
    for (size_t i = 0; i <= dir.size(); ++i) {
        if (i == dir.size() || dir[i] == '/') {
            if (!path.empty() && ::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
                throw std::runtime_error("mkdir " + path + ": " + std::strerror(errno));
        }
        if (i < dir.size()) path += dir[i];
    }
}

void write_text_file(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text;
    if (!f.flush()) throw std::runtime_error("cannot write " + path);
}

void write_result_files(const std::string& dir, const std::string& name, const std::string& csv,
                        const std::string& json, const std::string& md) {
    make_result_dir(dir);
    const std::string base = dir + "/" + name;
    write_text_file(base + ".csv", csv);
    write_text_file(base + ".json", json);
    write_text_file(base + ".md", md);
}

void write_bench_outputs(const std::string& dir, const std::string& name, const std::string& csv,
                         const std::string& json, const std::string& md, const std::string& plot_script) {
    write_result_files(dir, name, csv, json, md);
    const std::string base = dir + "/" + name;
    std::printf("\n%s\n", md.c_str());
    std::printf("bench %s: wrote %s.csv, %s.json, %s.md\n", name.c_str(), base.c_str(), base.c_str(), base.c_str());
    std::printf("bench %s: %s\n", name.c_str(), make_plot(name, base + ".csv", base + ".png", plot_script).c_str());
    std::fflush(stdout);
}

int finish_bench(const std::string& dir, const std::string& name, const std::string& csv, const std::string& json,
                 const std::string& md, const std::string& plot_script, bool all_ok, const char* ok_text,
                 const char* failed_text) {
    write_bench_outputs(dir, name, csv, json, md, plot_script);
    std::printf("bench %s: %s%s\n", name.c_str(), all_ok ? "" : "FAILED: ", all_ok ? ok_text : failed_text);
    return all_ok ? 0 : 1;
}

std::string make_plot(const std::string& which, const std::string& csv, const std::string& png,
                      const std::string& script) {
    return run_plot(find_plot_script(script, "plot_bench.py"), {which, csv, png}, png);
}

} // namespace kvmgpu::bench
