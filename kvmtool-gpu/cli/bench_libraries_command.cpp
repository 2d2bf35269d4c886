#include "kvmtool-gpu/cli/bench_libraries_command.h"

#include <cstdio>
#include <filesystem>
#include <set>

#include "kvmtool-gpu/bench/guest_bench_run.h"
#include "kvmtool-gpu/bench/libraries_report.h"
#include "kvmtool-gpu/bench/native_cuda.h"
#include "kvmtool-gpu/cli/arg_parser.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/kvm/open_kvm.h"
#include "kvmtool-gpu/vmm/guest_locator.h"

namespace kvmgpu::bench {

using cli::UsageError;

const char* bench_libraries_help() {
    static std::string text;
    if (text.empty())
        text = std::string(
                   "usage: kvmtool-gpu bench libraries [options]   (also: bench cublas)\n"
                   "\n"
                   "cuBLAS forwarded as calls (docs/libraries.md) against NVIDIA's cuBLAS natively,\n"
                   "in the same run: the program cublasBench runs natively first (its twin built by\n"
                   "nvcc with NVIDIA's runtime and libcublas, in a child process), then as a guest.\n"
                   "sgemm and GemmEx (fp16 and bf16 in, fp32 compute) TFLOP/s at each size, by CUDA\n"
                   "events on the stream (targets: the guest >= 99% of native from n = 4096); the\n"
                   "rate of 64 x 64 batched sgemms, strided and with device pointer arrays, by the\n"
                   "program's own clock (target >= 90% of native).\n"
                   "\n"
                   "  --sizes LIST        gemm sizes (default 1024,2048,4096,8192,16384)\n"
                   "  --reps N            repetitions per gemm (default: about 0.5 s of work each)\n"
                   "  --calls N           batched calls per measurement (default 2000)\n"
                   "  --batch N           matrices per batched call (default 16)\n"
                   "  --quick             sizes 64,128, 2 reps, 50 calls, batch 4 (CI on the host backend,\n"
                   "                      whose CPU reference refuses the half-precision gemms)\n"
                   "  --native PATH       the native twin (default: native-samples/cublasBench beside\n"
                   "                      the guests' folder)\n"
                   "  --no-native         skip the native run\n"
                   "  --guest NAME|PATH   the guest (default cublasBench)\n"
                   "  --out DIR           writes DIR/libraries.{csv,json,md} (default bench-results)\n"
                   "  --mem SIZE          guest RAM (default 256M)\n"
                   "  --timeout S         the guest run (default 1800)\n") +
               cli::vgpu_options_help() +
               "\n"
               "Exit status: 0 when every guest measurement completed, 1 otherwise, 2 for bad\n"
               "usage or a set-up error.\n";
    return text.c_str();
}

namespace {

// The program's own arguments, as key=value words (cublasBench.cu).
std::vector<std::string> program_args(const cli::ArgParser& p) {
    std::vector<std::string> a;
    const bool quick = p.has("quick");
    a.push_back("sizes=" + p.get_or("sizes", quick ? "64,128" : "1024,2048,4096,8192,16384"));
    if (auto v = p.get("reps")) a.push_back("reps=" + std::to_string(cli::parse_u64(*v, "--reps")));
    else if (quick) a.push_back("reps=2");
    a.push_back("calls=" + std::to_string(cli::parse_u64(p.get_or("calls", quick ? "50" : "2000"), "--calls")));
    a.push_back("batch=" + std::to_string(cli::parse_u64(p.get_or("batch", quick ? "4" : "16"), "--batch")));
    return a;
}

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The native twin's BLAS lines, run from a child process (as every native
// baseline here); meta says what it was or why there is none.
void run_native(const std::string& path, const std::vector<std::string>& args, std::vector<LibraryResult>* out,
                BenchMeta* meta) {
    if (!std::filesystem::exists(path)) {
        meta->set("native_baseline", "none (no " + path + "; build it: ninja native_samples)");
        return;
    }
    const auto lines = run_native_in_child(meta, [&](BenchMeta* m, const NativeEmit& emit) {
        std::string cmd = shell_quote(path);
        for (const auto& a : args) cmd += " " + shell_quote(a);
        FILE* f = ::popen((cmd + " 2>&1").c_str(), "r");
        if (!f) return m->set("native_baseline", "none (popen failed)");
        char buf[1024];
        bool done = false;
        while (std::fgets(buf, sizeof buf, f)) {
            std::printf("  [native] %s", buf);
            std::fflush(stdout);
            const std::string line(buf);
            if (auto l = parse_bench_line(line, {"BLAS", "BLAS-INFO", "BLAS-DONE"})) {
                if (l->tag == "BLAS") emit(line);
                if (l->tag == "BLAS-INFO") m->set("native_cublas_version", l->get("cublas_version"));
                if (l->tag == "BLAS-DONE") done = l->get("status") == "ok";
            }
        }
        const int rc = ::pclose(f);
        m->native_baseline = done && rc == 0;
        m->set("native_baseline", m->native_baseline ? "NVIDIA's runtime and libcublas, " + path
                                                     : "failed (" + path + " exit status " + std::to_string(rc) + ")");
    });
    for (const auto& line : lines)
        if (auto l = parse_bench_line(line, {"BLAS"}))
            if (auto r = library_result_from(*l, "native")) out->push_back(*r);
}

void print_result(const std::vector<LibraryResult>& all, const LibraryResult& r) {
    std::string extra;
    if (auto q = library_ratio(all, r)) {
        char b[64];
        std::snprintf(b, sizeof b, " (%.1f%% of native)", *q * 100);
        extra = b;
    }
    if (r.ok()) std::printf("  [guest] %s n=%llu: %.2f %s%s\n", r.metric.c_str(), (unsigned long long)r.n, r.rate(), r.unit(), extra.c_str());
    else std::printf("  [guest] %s n=%llu: %s\n", r.metric.c_str(), (unsigned long long)r.n, r.status.c_str());
    std::fflush(stdout);
}

} // namespace

int bench_libraries_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"sizes", "reps", "calls", "batch", "native", "guest", "out", "mem", "timeout"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    cli::ArgParser p(valued, {"quick", "no-native", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_libraries_help(), stdout);
        return 0;
    }
    const auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench libraries needs a vGPU (--vgpu none makes no sense here)");
    const std::vector<std::string> prog = program_args(p);
    VmOptions o;
    o.guest_path = locate_guest(p.get_or("guest", "cublasBench"));
    o.ram_bytes = cli::parse_size(p.get_or("mem", "256M"), "--mem");
    o.timeout_s = cli::parse_seconds(p.get_or("timeout", "1800"), "--timeout");
    o.linux.args = prog;
    const std::string native = p.get_or(
        "native", (std::filesystem::path(o.guest_path).parent_path().parent_path() / "native-samples" / "cublasBench").string());

    BenchMeta meta = start_bench("libraries", args, "the program's own clock (steady_clock) around each measurement");
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe());
    std::vector<LibraryResult> results;
    if (p.has("no-native")) meta.set("native_baseline", "none (--no-native)");
    else run_native(native, prog, &results, &meta);

    KvmSystem kvm = open_kvm();
    const std::string out_dir = p.get_or("out", "bench-results");
    bool done = false;
    auto on_line = [&](const BenchLine& l) {
        if (l.tag == "BLAS-INFO") return meta.set("guest_cublas_version", l.get("cublas_version"));
        if (l.tag == "BLAS-DONE") return void(done = l.get("status") == "ok");
        auto r = library_result_from(l, "guest");
        if (!r) return void(std::printf("  malformed line from the guest\n"));
        results.push_back(*r);
        print_result(results, *r);
        write_result_files(out_dir, "libraries", libraries_csv(results), libraries_json(results, meta),
                           libraries_markdown(results, meta));
    };
    GuestBenchOutcome outcome;
    const std::string failure =
        run_guest_bench_checked(kvm, o, *vgpu_cfg, {"BLAS", "BLAS-INFO", "BLAS-DONE"}, on_line, &outcome);
    record_guest_execution(&meta, outcome.result.execution);
    if (!outcome.backend.empty()) meta.set("vgpu_backend", outcome.backend);
    // The host backend's CPU reference has no half-precision gemm: it
    // refuses those (not_supported), which is its answer, not a failure.
    const bool host_backend = outcome.backend.rfind("host backend", 0) == 0;
    bool all_ok = failure.empty() && done;
    for (const LibraryResult& r : results)
        if (r.source == "guest") all_ok &= r.ok() || (host_backend && r.status == "not_supported");
    const std::string md = libraries_markdown(results, meta);
    write_result_files(out_dir, "libraries", libraries_csv(results), libraries_json(results, meta), md);
    std::printf("\n%s\nbench libraries: wrote %s/libraries.{csv,json,md}\n", md.c_str(), out_dir.c_str());
    if (!failure.empty()) std::printf("bench libraries: the guest FAILED: %s\n", failure.c_str());
    std::printf("bench libraries: %s\n", all_ok ? "every guest measurement completed"
                                                : "FAILED: some guest measurements did not complete (see above)");
    return all_ok ? 0 : 1;
}

} // namespace kvmgpu::bench
