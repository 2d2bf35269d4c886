#include "kvmtool-gpu/cli/bench_commands.h"

#include <map>
#include <stdexcept>

#include "kvmtool-gpu/bench/bench_table.h"

namespace kvmgpu::cli {

namespace {

// A function's static: registrations run during static initialisation, in
// no set order across files.
std::map<std::string, BenchCommand, std::less<>>& commands() {
    static std::map<std::string, BenchCommand, std::less<>> all;
    return all;
}

} // namespace

BenchCommandRegistration::BenchCommandRegistration(std::string_view name, BenchCommand command) {
    const bench::BenchEntry* entry = bench::find_bench(name);
    if (!entry || entry->name != name) throw std::logic_error("bench command '" + std::string(name) + "' has no row in bench_table()");
    if (!commands().emplace(std::string(name), command).second)
        throw std::logic_error("bench command '" + std::string(name) + "' registered twice");
}

BenchCommand find_bench_command(std::string_view name) {
    const auto it = commands().find(name);
    return it == commands().end() ? nullptr : it->second;
}

void set_plan_common(const ArgParser& p, const std::vector<std::string>& args, const VgpuConfig& vgpu,
                     bench::BenchPlan* plan) {
    plan->args = args;
    plan->vgpu = vgpu;
    plan->native = !p.has("no-native");
    plan->out_dir = p.get_or("out", "bench-results");
    plan->plot_script = p.get_or("plot-script", "");
}

} // namespace kvmgpu::cli
