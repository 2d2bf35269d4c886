#include "kvmtool-gpu/bench/bench_commands.h"

#include <map>
#include <stdexcept>

#include "kvmtool-gpu/bench/bench_table.h"

namespace kvmgpu::bench {

namespace {

// A function's static: registrations run during static initialisation, in
// no set order across files.
std::map<std::string, BenchCommand, std::less<>>& commands() {
    static std::map<std::string, BenchCommand, std::less<>> all;
    return all;
}

} // namespace

BenchCommandRegistration::BenchCommandRegistration(std::string_view name, BenchCommand command) {
    const BenchEntry* entry = find_bench(name);
    if (!entry || entry->name != name) throw std::logic_error("bench command '" + std::string(name) + "' has no row in bench_table()");
    if (!commands().emplace(std::string(name), command).second)
        throw std::logic_error("bench command '" + std::string(name) + "' registered twice");
}

BenchCommand find_bench_command(std::string_view name) {
    const auto it = commands().find(name);
    return it == commands().end() ? nullptr : it->second;
}

} // namespace kvmgpu::bench
