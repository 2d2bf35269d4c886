// Draws a figure with one of the project's Python scripts (plot_bench.py,
// plot_tlb.py; each exits 3 without matplotlib): finds the script and runs
// it under the first python3 that works.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu {

// `given` if not empty; else `name` in plots/ beside the running binary or
// one folder up (the build copies the scripts to <build>/plots, and
// pack-carry.sh carries them beside the binaries). Empty when none is
// readable.
std::string find_plot_script(const std::string& given, const std::string& name);

// Runs `python3 script args...`: the python3 on PATH, then /usr/bin/python3
// (a pyenv or venv interpreter on PATH often lacks matplotlib). Returns one
// line: "plot: <png>", "plot skipped: <why>" or "plot failed: <why>".
std::string run_plot(const std::string& script, const std::vector<std::string>& args, const std::string& png);

} // namespace kvmgpu
