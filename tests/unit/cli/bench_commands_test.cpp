// The bench table and the commands registered under its names: every row
// has a command in this build (tlb's from tlb-study/ included), aliases
// resolve, and a registration for a name the table lacks, or a second one,
// is refused.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "kvmtool-gpu/bench/bench_commands.h"
#include "kvmtool-gpu/bench/bench_table.h"

using kvmgpu::bench::bench_names_text;
using kvmgpu::bench::bench_table;
using kvmgpu::bench::find_bench;
using kvmgpu::bench::BenchCommandRegistration;
using kvmgpu::bench::find_bench_command;

namespace {

int nothing(const std::vector<std::string>&) { return 0; }

TEST(BenchCommands, EveryRowHasACommandAndTheParts) {
    std::set<std::string_view> names;
    for (const auto& b : bench_table()) {
        EXPECT_TRUE(names.insert(b.name).second) << b.name;
        EXPECT_NE(find_bench_command(b.name), nullptr) << "no command registered for bench " << b.name;
        EXPECT_EQ(b.usage.rfind("  bench " + std::string(b.name), 0), 0u) << b.usage;
        EXPECT_EQ(b.usage.back(), '\n');
        EXPECT_FALSE(b.guests.empty()) << b.name;
        EXPECT_FALSE(b.report.empty()) << b.name;
    }
    EXPECT_EQ(names.size(), 8u);
}

TEST(BenchCommands, NamesAndAliases) {
    ASSERT_NE(find_bench("cublas"), nullptr);
    EXPECT_EQ(find_bench("cublas")->name, "libraries");
    EXPECT_EQ(find_bench("nosuch"), nullptr);
    EXPECT_EQ(find_bench(""), nullptr);
    EXPECT_EQ(bench_names_text(), "boot, bandwidth, calls, libraries, multigpu, p2p, share or tlb");
}

TEST(BenchCommands, UnknownOrSecondRegistrationsAreRefused) {
    EXPECT_THROW(BenchCommandRegistration("nosuch", nothing), std::logic_error);
    EXPECT_THROW(BenchCommandRegistration("cublas", nothing), std::logic_error); // an alias is no row's name
    EXPECT_THROW(BenchCommandRegistration("calls", nothing), std::logic_error);
    EXPECT_NE(find_bench_command("calls"), &nothing);
}

} // namespace
