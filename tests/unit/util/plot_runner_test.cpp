// The one plot runner: a given script wins, a missing one is skipped with
// a reason, and a script runs with its arguments under a python3 that has
// matplotlib (skipped with the reason where none has it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "kvmtool-gpu/util/plot_runner.h"

namespace kvmgpu {
namespace {

std::string temp_path(const char* name) { return ::testing::TempDir() + name + std::to_string(getpid()); }

TEST(PlotRunner, GivenScriptWinsAndMissingOneIsSkipped) {
    EXPECT_EQ(find_plot_script("/some/where/plot.py", "plot_bench.py"), "/some/where/plot.py");
    EXPECT_EQ(find_plot_script("", "no_such_plot_script.py"), "");
    EXPECT_EQ(run_plot("", {}, "x.png"), "plot skipped: no plot script (give --plot-script PATH)");
}

TEST(PlotRunner, RunsTheScriptWithItsArguments) {
    const std::string script = temp_path("echo_plot.py"), out = temp_path("echo_plot.out");
    std::ofstream(script) << "import sys\nopen(sys.argv[2], 'w').write(sys.argv[1])\n";
    const std::string line = run_plot(script, {"calls", out}, "fig.png");
    if (line.rfind("plot skipped:", 0) == 0) {
        std::remove(script.c_str());
        GTEST_SKIP() << line;
    }
    EXPECT_EQ(line, "plot: fig.png");
    std::string got;
    std::ifstream(out) >> got;
    EXPECT_EQ(got, "calls");
    std::ofstream(script) << "import sys\nsys.exit(5)\n";
    EXPECT_EQ(run_plot(script, {}, "fig.png"), "plot failed: " + script + " exited with status 5");
    std::remove(script.c_str());
    std::remove(out.c_str());
}

} // namespace
} // namespace kvmgpu
