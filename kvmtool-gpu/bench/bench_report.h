// What every benchmark result file carries besides its numbers (machine,
// GPU, driver, backends, what executes guest code, date, command line), and
// the writers the benches share: JSON text, the result folder, the plot.
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>
#include <tuple>

#include "kvmtool-gpu/vmm/execution_mode.h"
#include "kvmtool-gpu/util/json.h"

namespace kvmgpu::bench {

// Ordered key/value pairs; `emulated` and `nested` are kept apart for labels.
struct BenchMeta {
    std::vector<std::pair<std::string, std::string>> fields;
    bool guest_code_emulated = false; // some guest run measured its code as emulated
    bool guest_code_measured = false;
    std::string wall_meaning;
    bool nested = false;
    bool native_baseline = false;
    auto wire() { return std::tie(fields, guest_code_emulated, guest_code_measured, wall_meaning, nested, native_baseline); }
    void set(const std::string& key, const std::string& value);
    std::string get(const std::string& key) const;
};

// Machine, kernel, date, KVM flavour, huge-page pools (the tlb study's
// collect_machine_info), the command line.
BenchMeta collect_bench_meta(const std::string& bench, const std::vector<std::string>& args);

// collect_bench_meta, plus "guest_wall" (what the guest's TSC times cover,
// `wall_meaning`) and a banner line on stdout.
BenchMeta start_bench(const std::string& bench, const std::vector<std::string>& args, const std::string& wall_meaning);

// Records how one guest run's code executed (measured by the run itself):
// "guest_code" says it, and one emulated run labels the whole table's guest
// wall times as emulator times. Prints a line when the mode is first known
// or changes.
void record_guest_execution(BenchMeta* m, const ExecutionMode& e);

// The meta fields as one JSON object.
Json meta_json(const BenchMeta& m);

// {"meta": {...}, "results": [row_json(row), ...]}, as a file's text.
template <class Row, class RowJson>
std::string results_json(const BenchMeta& meta, const std::vector<Row>& rows, RowJson row_json) {
    Json doc;
    doc["meta"] = meta_json(meta);
    Json results = Json::array();
    for (const auto& r : rows) results.push_back(row_json(r));
    doc["results"] = std::move(results);
    return json_text(doc);
}

// Appends to *results, in plan order, the result of every planned key: the
// one the guest sent, else Result{key} (status "missing"). False when any
// appended result is not completed(result).
template <class Result, class Key, class Completed>
bool append_planned(std::vector<Result>* results, const std::vector<Key>& expected, const std::vector<Result>& got,
                    Completed completed) {
    bool all = true;
    for (const auto& key : expected) {
        auto it = std::find_if(got.begin(), got.end(), [&](const Result& r) { return r.key == key; });
        results->push_back(it != got.end() ? *it : Result{key});
        all = all && completed(results->back());
    }
    return all;
}
// The meta block as markdown bullet lines.
std::string meta_markdown(const BenchMeta& m);

// "12.3" with about 3 significant digits (0.123, 1.23, 12.3, 123).
std::string rate_text(double gbps);
std::string percent_text(double ratio); // 0.987 -> "98.7%"
std::string number_text(double v);      // for CSV: %.6g

// Creates the folder (and parents); throws std::runtime_error with errno text.
void make_result_dir(const std::string& dir);
void write_text_file(const std::string& path, const std::string& text);

// Writes DIR/NAME.{csv,json,md}. The benches call it after every VM, so a
// sweep cut short (a time limit) leaves what it had measured.
void write_result_files(const std::string& dir, const std::string& name, const std::string& csv,
                        const std::string& json, const std::string& md);
// write_result_files, then prints the markdown, makes DIR/NAME.png with
// make_plot, and prints a line for each.
void write_bench_outputs(const std::string& dir, const std::string& name, const std::string& csv,
                         const std::string& json, const std::string& md, const std::string& plot_script);
// A bench's end: write_bench_outputs, then "bench NAME: <ok_text>" or
// "bench NAME: FAILED: <failed_text>"; the exit status, 0 when all_ok.
int finish_bench(const std::string& dir, const std::string& name, const std::string& csv, const std::string& json,
                 const std::string& md, const std::string& plot_script, bool all_ok, const char* ok_text,
                 const char* failed_text);

// Runs plot_bench.py (`which`: "bandwidth" or "calls") on csv -> png; the
// script is `script` if not empty, else found as find_plot_script() says.
// Returns one line: what it did or why it skipped (no python3, no
// matplotlib, no script).
std::string make_plot(const std::string& which, const std::string& csv, const std::string& png,
                      const std::string& script);

} // namespace kvmgpu::bench
