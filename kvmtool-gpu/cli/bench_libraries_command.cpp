// `kvmtool-gpu bench libraries` (or `bench cublas`): cuBLAS forwarded as
// calls against NVIDIA's cuBLAS natively, in the same run: one program
// (guest-stub/samples/cublasBench.cu), its native twin run first in a
// child process, then the guest.
// Flags only: they become a plan that the bench runs; the command registers
// itself under its name (bench/bench_commands.h).

#include <cstdio>
#include <filesystem>
#include <set>

#include "kvmtool-gpu/bench/bench_commands.h"
#include "kvmtool-gpu/bench/libraries_bench.h"
#include "kvmtool-gpu/cli/bench_flags.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/vmm/guest_locator.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"

namespace kvmgpu::bench {

namespace {


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
                   "  --nvidia-guest      also run the native twin as a Linux-ABI guest with the host's\n"
                   "                      system as its read-only root (as run --root /): NVIDIA's own\n"
                   "                      runtime and libcublas over the guest libcuda.so.1, beside the\n"
                   "                      forwarded cuBLAS, with at least 4G of guest RAM (docs/libraries.md)\n"
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
std::vector<std::string> program_args(const ArgParser& p) {
    std::vector<std::string> a;
    const bool quick = p.has("quick");
    a.push_back("sizes=" + p.get_or("sizes", quick ? "64,128" : "1024,2048,4096,8192,16384"));
    if (auto v = p.get("reps")) a.push_back("reps=" + std::to_string(parse_u64(*v, "--reps")));
    else if (quick) a.push_back("reps=2");
    a.push_back("calls=" + std::to_string(parse_u64(p.get_or("calls", quick ? "50" : "2000"), "--calls")));
    a.push_back("batch=" + std::to_string(parse_u64(p.get_or("batch", quick ? "4" : "16"), "--batch")));
    return a;
}

} // namespace

int bench_libraries_command(const std::vector<std::string>& args) {
    std::set<std::string> valued = {"sizes", "reps", "calls", "batch", "native", "guest", "out", "mem", "timeout"};
    valued.insert(cli::vgpu_option_names().begin(), cli::vgpu_option_names().end());
    ArgParser p(valued, {"quick", "no-native", "nvidia-guest", "help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(bench_libraries_help(), stdout);
        return 0;
    }
    const auto vgpu_cfg = cli::parse_vgpu_flags(p);
    if (!vgpu_cfg) throw UsageError("bench libraries needs a vGPU (--vgpu none makes no sense here)");
    LibrariesBenchPlan plan;
    VmOptions& o = plan.vm;
    o.guest_path = locate_guest(p.get_or("guest", "cublasBench"));
    o.ram_bytes = parse_size(p.get_or("mem", "256M"), "--mem");
    o.timeout_s = parse_seconds(p.get_or("timeout", "1800"), "--timeout", VcpuWatchdog::kMaxTimeoutS);
    o.linux.args = program_args(p);
    plan.native_path = p.get_or(
        "native", (std::filesystem::path(o.guest_path).parent_path().parent_path() / "native-samples" / "cublasBench").string());
    if (p.has("nvidia-guest")) {
        const auto libcuda = locate_guest_library("libcuda.so.1");
        if (!libcuda) throw UsageError("--nvidia-guest: no guest libcuda.so.1 beside the guests (build guest_libcuda)");
        plan.nvidia_guest_libcuda = *libcuda;
    }
    cli::set_plan_common(p, args, *vgpu_cfg, &plan);
    return run_libraries_bench(plan);
}

const bench::BenchCommandRegistration kRegistered("libraries", bench_libraries_command);

} // namespace

} // namespace kvmgpu::bench
