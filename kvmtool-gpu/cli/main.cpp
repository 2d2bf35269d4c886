// kvmtool-gpu: the command-line front end. Subcommands own their options;
// every failure ends as one line on stderr and a non-zero status.
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "kvmgpu/kvmgpu.hpp"
#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/bench/bench_commands.h"
#include "kvmtool-gpu/bench/bench_table.h"
#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/cli/run_command.h"
#include "kvmtool-gpu/cli/gpu_server_command.h"

namespace {

// The benches' lines come from their table (bench/bench_table.h).
std::string usage() {
    std::string text = "usage: kvmtool-gpu <command> [options]\n"
                       "\n"
                       "A mini-hypervisor on KVM with an emulated GPU (vGPU) that executes the\n"
                       "guest's CUDA Driver API calls in the VMM.\n"
                       "\n"
                       "commands:\n"
                       "  run         boot a guest (kvmtool-gpu run --help)\n"
                       "  gpu-server  serve the vGPUs of VMs on other hosts (gpu-server --help)\n";
    for (const auto& b : kvmgpu::bench::bench_table()) text += b.usage;
    return text + "  version     print the version and ABI versions\n"
                  "\n"
                  "kvmtool-gpu <command> --help shows each command's options.\n";
}

} // namespace

int main(int argc, char** argv) {
    // Before any VM or thread: the process limits shared by all of them, and
    // the process GPU workers start from, forked now, holding none of the VMs
    // to come (if it cannot start, the first worker says why).
    kvmgpu::prepare_process();
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::fputs(usage().c_str(), args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    try {
        if (cmd == "run") return kvmgpu::cli::run_command(args);
        if (cmd == "gpu-server") return kvmgpu::cli::gpu_server_command(args);
        if (cmd == "bench") {
            if (args.empty() || args[0] == "--help")
                throw kvmgpu::UsageError("bench needs a benchmark name: " + kvmgpu::bench::bench_names_text() +
                                              " (see kvmtool-gpu --help)");
            const std::string which = args[0];
            args.erase(args.begin());
            const kvmgpu::bench::BenchEntry* bench = kvmgpu::bench::find_bench(which);
            if (!bench) throw kvmgpu::UsageError("unknown benchmark '" + which + "'");
            const kvmgpu::bench::BenchCommand command = kvmgpu::bench::find_bench_command(bench->name);
            if (!command) throw std::logic_error("bench " + std::string(bench->name) + " has no command in this build");
            return command(args);
        }
        if (cmd == "version") {
            std::printf("kvmtool-gpu %s (platform ABI %u, vGPU ABI %u)\n", KVMGPU_VERSION, KVMGPU_PLATFORM_ABI_VERSION,
                        VGPU_ABI_VERSION);
            return 0;
        }
        throw kvmgpu::UsageError("unknown command '" + cmd + "' (see kvmtool-gpu --help)");
    } catch (const kvmgpu::UsageError& e) {
        std::fprintf(stderr, "kvmtool-gpu: usage error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kvmtool-gpu: error: %s\n", e.what());
        return 2;
    }
}
