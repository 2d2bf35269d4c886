#include "kvmtool-gpu/bench/libraries_bench.h"

#include <algorithm>
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
// The least guest RAM the --nvidia-guest run gets.
constexpr uint64_t kNvidiaGuestMinRam = 4ull << 30;

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

// The native twin as a Linux-ABI guest: the host's system read-only at "/",
// the guest libcuda.so.1 lent for libcuda.so*, the same arguments.
VmOptions nvidia_guest_options(const LibrariesBenchPlan& plan) {
    VmOptions o = plan.vm;
    o.guest_path = std::filesystem::absolute(plan.native_path).string();
    o.linux.root_dir = "/";
    o.linux.libcuda_overlay = plan.nvidia_guest_libcuda;
    // NVIDIA's runtime and libraries keep large heaps of their own (module
    // images, cuBLASLt's heuristics): the forwarded guest's default is too small.
    o.ram_bytes = std::max<uint64_t>(o.ram_bytes, kNvidiaGuestMinRam);
    return o;
}

void print_result(const std::vector<LibraryResult>& all, const LibraryResult& r) {
    std::string extra;
    if (auto q = library_ratio(all, r)) {
        char b[64];
        std::snprintf(b, sizeof b, " (%.1f%% of native)", *q * 100);
        extra = b;
    }
    const char* side = r.source == kNvidiaGuestSource ? "guest, NVIDIA's cuBLAS" : "guest";
    if (r.ok()) std::printf("  [%s] %s n=%llu: %.2f %s%s\n", side, r.metric.c_str(), (unsigned long long)r.n, r.rate(), r.unit(), extra.c_str());
    else std::printf("  [%s] %s n=%llu: %s\n", side, r.metric.c_str(), (unsigned long long)r.n, r.status.c_str());
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
    // One guest run of `opts`, its rows under `source`; "" or why it failed.
    auto run_guest = [&](const VmOptions& opts, const std::string& source, bool* done, GuestBenchOutcome* outcome) {
        const std::string version_key = source == "guest" ? "guest_cublas_version" : "guest_nvidia_cublas_version";
        auto on_line = [&](const BenchLine& l) {
            if (l.tag == KVMGPU_TAG_BLAS_INFO) return meta.set(version_key, l.get("cublas_version"));
            if (l.tag == KVMGPU_TAG_BLAS_DONE) return void(*done = l.get("status") == "ok");
            auto r = library_result_from(l, source);
            if (!r) return void(std::printf("  malformed line from the guest\n"));
            results.push_back(*r);
            print_result(results, *r);
            write_result_files(out_dir, "libraries", libraries_csv(results), libraries_json(results, meta),
                               libraries_markdown(results, meta));
        };
        return run_guest_bench_checked(kvm, opts, *vgpu_cfg, {KVMGPU_TAG_BLAS, KVMGPU_TAG_BLAS_INFO, KVMGPU_TAG_BLAS_DONE},
                                       on_line, outcome);
    };
    bool done = false;
    GuestBenchOutcome outcome;
    std::string failure = run_guest(o, "guest", &done, &outcome);
    record_guest_execution(&meta, outcome.result.execution);
    if (!outcome.backend.empty()) meta.set("vgpu_backend", outcome.backend);
    if (!plan.nvidia_guest_libcuda.empty()) {
        bool nvidia_done = false;
        GuestBenchOutcome nvidia_outcome;
        const std::string nvidia_failure =
            run_guest(nvidia_guest_options(plan), kNvidiaGuestSource, &nvidia_done, &nvidia_outcome);
        meta.set("guest_nvidia", "the native twin as a guest, --root /, libcuda " + plan.nvidia_guest_libcuda);
        if (!nvidia_failure.empty()) failure += (failure.empty() ? "" : "; ") + ("NVIDIA's cuBLAS guest: " + nvidia_failure);
        done = done && nvidia_done;
    }
    // The host backend's CPU reference has no half-precision gemm: it
    // refuses those (not_supported), which is its answer, not a failure.
    const bool host_backend = outcome.backend.rfind("host backend", 0) == 0;
    bool all_ok = failure.empty() && done;
    for (const LibraryResult& r : results)
        if (r.source != "native") all_ok &= r.ok() || (host_backend && r.status == "not_supported");
    const std::string md = libraries_markdown(results, meta);
    write_result_files(out_dir, "libraries", libraries_csv(results), libraries_json(results, meta), md);
    std::printf("\n%s\nbench libraries: wrote %s/libraries.{csv,json,md}\n", md.c_str(), out_dir.c_str());
    if (!failure.empty()) std::printf("bench libraries: the guest FAILED: %s\n", failure.c_str());
    std::printf("bench libraries: %s\n", all_ok ? "every guest measurement completed"
                                                : "FAILED: some guest measurements did not complete (see above)");
    return all_ok ? 0 : 1;
}

} // namespace kvmgpu::bench
