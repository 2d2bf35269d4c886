// kvmtool-gpu: the command-line front end. Subcommands own their options;
// every failure ends as one line on stderr and a non-zero status.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/cli/bench_bandwidth_command.h"
#include "kvmtool-gpu/cli/bench_calls_command.h"
#include "kvmtool-gpu/cli/bench_libraries_command.h"
#include "kvmtool-gpu/cli/bench_multigpu_command.h"
#include "kvmtool-gpu/cli/bench_p2p_command.h"
#include "kvmtool-gpu/cli/bench_share_command.h"
#include "kvmtool-gpu/cli/arg_parser.h"
#include "kvmtool-gpu/cli/bench_boot_command.h"
#include "kvmtool-gpu/cli/bench_tlb_command.h"
#include "kvmtool-gpu/cli/run_command.h"

namespace {

const char* kUsage =
    "usage: kvmtool-gpu <command> [options]\n"
    "\n"
    "A mini-hypervisor on KVM with an emulated GPU (vGPU) that executes the\n"
    "guest's CUDA Driver API calls in the VMM.\n"
    "\n"
    "commands:\n"
    "  run         boot a guest (kvmtool-gpu run --help)\n"
    "  bench boot  time VM creation to the guest's first instruction and exit\n"
    "  bench bandwidth  host<->device copy bandwidth in guests against native, one run\n"
    "  bench calls  cost of a virtual CUDA call per doorbell, batching off/on, against native\n"
    "  bench libraries  cuBLAS through the vGPU: sgemm and fp16/bf16 GemmEx TFLOP/s, small\n"
    "               batched gemms per second, against native (also: bench cublas)\n"
    "  bench multigpu  A*B+C*D on four devices: peer copies vs staging through the host, against native\n"
    "  bench p2p   copies between a VM's devices (p2pBandwidthLatencyTest's matrix), against native\n"
    "  bench share  N VMs on one GPU at once: throughput, fairness, latency, against N native processes\n"
    "  bench tlb   4 KiB vs 2 MiB pages: pointer chase natively and in guests, VMM translation\n"
    "  version     print the version and ABI versions\n"
    "\n"
    "kvmtool-gpu <command> --help shows each command's options.\n";

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::fputs(kUsage, args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    try {
        if (cmd == "run") return kvmgpu::cli::run_command(args);
        if (cmd == "bench") {
            if (args.empty() || args[0] == "--help")
                throw kvmgpu::cli::UsageError("bench needs a benchmark name: boot, bandwidth, calls, libraries, multigpu, p2p, share or tlb (see kvmtool-gpu --help)");
            const std::string which = args[0];
            args.erase(args.begin());
            if (which == "boot") return kvmgpu::cli::bench_boot_command(args);
            if (which == "bandwidth") return kvmgpu::bench::bench_bandwidth_command(args);
            if (which == "calls") return kvmgpu::bench::bench_calls_command(args);
            if (which == "libraries" || which == "cublas") return kvmgpu::bench::bench_libraries_command(args);
            if (which == "multigpu") return kvmgpu::bench::bench_multigpu_command(args);
            if (which == "p2p") return kvmgpu::bench::bench_p2p_command(args);
            if (which == "share") return kvmgpu::bench::bench_share_command(args);
            if (which == "tlb") return kvmgpu::cli::bench_tlb_command(args);
            throw kvmgpu::cli::UsageError("unknown benchmark '" + which + "'");
        }
        if (cmd == "version") {
            std::printf("kvmtool-gpu %s (platform ABI %u, vGPU ABI %u)\n", KVMGPU_VERSION, KVMGPU_PLATFORM_ABI_VERSION,
                        VGPU_ABI_VERSION);
            return 0;
        }
        throw kvmgpu::cli::UsageError("unknown command '" + cmd + "' (see kvmtool-gpu --help)");
    } catch (const kvmgpu::cli::UsageError& e) {
        std::fprintf(stderr, "kvmtool-gpu: usage error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kvmtool-gpu: error: %s\n", e.what());
        return 2;
    }
}
