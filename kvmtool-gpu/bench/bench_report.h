// What every benchmark result file carries besides its numbers (machine,
// GPU, driver, backends, what executes guest code, date, command line), and
// the writers the benches share: JSON text, the result folder, the plot.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tlb-study/json_writer.h"

namespace kvmgpu::bench {

// Ordered key/value pairs; `emulated` and `nested` are kept apart for labels.
struct BenchMeta {
    std::vector<std::pair<std::string, std::string>> fields;
    bool guest_code_emulated = false;
    bool nested = false;
    bool native_baseline = false;
    void set(const std::string& key, const std::string& value);
    std::string get(const std::string& key) const;
};

// Machine, kernel, date, KVM flavour, huge-page pools (the tlb study's
// collect_machine_info), the command line.
BenchMeta collect_bench_meta(const std::string& bench, const std::vector<std::string>& args);

// "meta": {...} as the next key of the object being written.
void write_meta_json(tlbstudy::JsonWriter& w, const BenchMeta& m);
// The meta block as markdown bullet lines.
std::string meta_markdown(const BenchMeta& m);

// Creates the folder (and parents); throws std::runtime_error with errno text.
void make_result_dir(const std::string& dir);
void write_text_file(const std::string& path, const std::string& text);

// Runs plot_bench.py (`which`: "bandwidth" or "calls") on csv -> png. The
// script is looked for at `script` if not empty, $KVMGPU_BENCH_PLOT, beside
// the sources relative to the executable (<exe>/../../kvmtool-gpu/bench/),
// and at its build-time source path. Returns one line: what it did or why
// it skipped (no python3, no matplotlib, no script).
std::string make_plot(const std::string& which, const std::string& csv, const std::string& png,
                      const std::string& script);

} // namespace kvmgpu::bench
