#include "kvmtool-gpu/cli/gpu_share_flags.h"

#include <stdexcept>

namespace kvmgpu::cli {

const std::set<std::string>& gpu_share_option_names() {
    static const std::set<std::string> names = {"gpu-share", "mps-pipe", "mps-thread-percentage", "mps-mem-limit",
                                                "mps-fallback"};
    return names;
}

const char* gpu_share_options_help() {
    return "  --gpu-share contexts|mps  how the VMs share a GPU (default contexts: each GPU\n"
           "                      worker has its own CUDA context, time-sliced by the GPU;\n"
           "                      mps: every worker is a client of one MPS server, whose\n"
           "                      kernels run at once, and a fatal fault in one VM's worker\n"
           "                      replaces every VM's worker)\n"
           "  --mps-pipe DIR      attach to the MPS control daemon whose pipe directory is DIR\n"
           "                      (ours or root's, not world-writable; default: start one for\n"
           "                      the run in a private directory and stop it at the end)\n"
           "  --mps-thread-percentage P  each worker's share of the SMs, 1..100\n"
           "                      (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)\n"
           "  --mps-mem-limit SIZE  device memory each worker may pin, whole MiB\n"
           "                      (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT), beside --gpu-mem-quota\n"
           "  --mps-fallback contexts|stop  when MPS cannot be had or its daemon dies mid-run:\n"
           "                      warn and share by contexts, or stop (default stop)\n";
}

GpuShareOptions parse_gpu_share_flags(const ArgParser& p) {
    GpuShareOptions o;
    const std::string mode = p.get_or("gpu-share", "contexts");
    if (mode == "mps") o.mode = GpuShareMode::Mps;
    else if (mode != "contexts") throw UsageError("--gpu-share '" + mode + "': expected contexts or mps");
    const std::string fb = p.get_or("mps-fallback", "stop");
    if (fb == "contexts") o.fallback = MpsFallback::Contexts;
    else if (fb != "stop") throw UsageError("--mps-fallback '" + fb + "': expected contexts or stop");
    if (auto v = p.get("mps-pipe")) {
        if (v->empty()) throw UsageError("--mps-pipe: empty path");
        o.mps_pipe = *v;
    }
    if (auto v = p.get("mps-thread-percentage")) {
        const uint64_t pct = parse_u64(*v, "--mps-thread-percentage");
        if (pct < 1 || pct > 100) throw UsageError("--mps-thread-percentage '" + *v + "': 1..100");
        o.thread_percentage = static_cast<unsigned>(pct);
    }
    if (auto v = p.get("mps-mem-limit")) {
        o.pinned_mem_limit = parse_size(*v, "--mps-mem-limit");
        if (o.pinned_mem_limit == 0) throw UsageError("--mps-mem-limit '" + *v + "': at least 1M");
    }
    try {
        validate(o);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    return o;
}

} // namespace kvmgpu::cli
