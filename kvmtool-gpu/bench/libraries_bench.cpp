#include "kvmtool-gpu/bench/libraries_bench.h"

#include <cstdio>
#include <filesystem>

#include "kvmtool-gpu/abi/console_tags.h"
#include "kvmtool-gpu/bench/guest_bench_run.h"
#include "kvmtool-gpu/bench/libraries_report.h"
#include "kvmtool-gpu/bench/native_child.h"
#include "kvmtool-gpu/kvm/open_kvm.h"

namespace kvmgpu::bench {

namespace {

// The native twin's bound: its full sweep (up to n = 16384) takes minutes.
constexpr double kLibrariesNativeBoundS = 1800;

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The native twin's BLAS lines, run from a child process (as every native
// baseline here, native_child.h); meta says what it was or why there is none.
void run_native(const std::string& path, const std::vector<std::string>& args, std::vector<LibraryResult>* out,
                BenchMeta* meta) {
    if (!std::filesystem::exists(path)) {
        meta->set("native_baseline", "none (no " + path + "; build it: ninja native_samples)");
        return;
    }
    const auto rows = native_rows_in_child<LibraryResult>(meta, kLibrariesNativeBoundS, [&](BenchMeta* m) {
        std::vector<LibraryResult> mine;
        std::string cmd = shell_quote(path);
        for (const auto& a : args) cmd += " " + shell_quote(a);
        FILE* f = ::popen((cmd + " 2>&1").c_str(), "r");
        if (!f) {
            m->set("native_baseline", "none (popen failed)");
            return mine;
        }
        char buf[1024];
        bool done = false;
        while (std::fgets(buf, sizeof buf, f)) {
            std::printf("  [native] %s", buf);
            std::fflush(stdout);
            // The twin is a program of its own: its console lines are its interface.
            if (auto l = parse_bench_line(buf, {KVMGPU_TAG_BLAS, KVMGPU_TAG_BLAS_INFO, KVMGPU_TAG_BLAS_DONE})) {
                if (l->tag == KVMGPU_TAG_BLAS)
                    if (auto r = library_result_from(*l, "native")) mine.push_back(*r);
                if (l->tag == KVMGPU_TAG_BLAS_INFO) m->set("native_cublas_version", l->get("cublas_version"));
                if (l->tag == KVMGPU_TAG_BLAS_DONE) done = l->get("status") == "ok";
            }
        }
        const int rc = ::pclose(f);
        m->native_baseline = done && rc == 0;
        m->set("native_baseline", m->native_baseline ? "NVIDIA's runtime and libcublas, " + path
                                                     : "failed (" + path + " exit status " + std::to_string(rc) + ")");
        return mine;
    });
    out->insert(out->end(), rows.begin(), rows.end());
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

int run_libraries_bench(const LibrariesBenchPlan& plan) {
    const VgpuConfig* vgpu_cfg = &plan.vgpu;
    const VmOptions& o = plan.vm;

    BenchMeta meta = start_bench("libraries", plan.args, "the program's own clock (steady_clock) around each measurement");
    if (vgpu_cfg->share) meta.set("gpu_share", vgpu_cfg->share->describe());
    std::vector<LibraryResult> results;
    if (!plan.native) meta.set("native_baseline", "none (--no-native)");
    else run_native(plan.native_path, plan.vm.linux.args, &results, &meta);

    KvmSystem kvm = open_kvm();
    const std::string& out_dir = plan.out_dir;
    bool done = false;
    auto on_line = [&](const BenchLine& l) {
        if (l.tag == KVMGPU_TAG_BLAS_INFO) return meta.set("guest_cublas_version", l.get("cublas_version"));
        if (l.tag == KVMGPU_TAG_BLAS_DONE) return void(done = l.get("status") == "ok");
        auto r = library_result_from(l, "guest");
        if (!r) return void(std::printf("  malformed line from the guest\n"));
        results.push_back(*r);
        print_result(results, *r);
        write_result_files(out_dir, "libraries", libraries_csv(results), libraries_json(results, meta),
                           libraries_markdown(results, meta));
    };
    GuestBenchOutcome outcome;
    const std::string failure =
        run_guest_bench_checked(kvm, o, *vgpu_cfg, {KVMGPU_TAG_BLAS, KVMGPU_TAG_BLAS_INFO, KVMGPU_TAG_BLAS_DONE}, on_line, &outcome);
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
