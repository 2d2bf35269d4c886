#include "kvmtool-gpu/cli/vgpu_flags.h"

#include "kvmtool-gpu/api/vgpu_spec.h"
#include "kvmtool-gpu/cli/gpu_share_flags.h"

namespace kvmgpu::cli {

namespace {
// parse_u64 for 32-bit fields: a value that does not fit is an error, not
// silently truncated (--max-handles 4294967297 would otherwise mean 1).
uint32_t parse_u32(const std::string& text, const std::string& what) {
    const uint64_t v = parse_u64(text, what);
    if (v > UINT32_MAX) throw UsageError(what + " '" + text + "': too large");
    return static_cast<uint32_t>(v);
}
} // namespace

std::vector<int> parse_gpu_list(const std::string& text) {
    std::vector<int> out;
    size_t at = 0;
    while (true) {
        const size_t comma = text.find(',', at);
        const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 3)
            throw UsageError("--gpus '" + text + "': expected GPU ordinals separated by commas, e.g. 0,1 or 0,0,0,0");
        const int ordinal = std::stoi(item);
        if (ordinal >= kMaxGpuOrdinal) throw UsageError("--gpus '" + text + "': ordinal " + item + " is too large");
        out.push_back(ordinal);
        if (out.size() > kMaxGuestDevices)
            throw UsageError("--gpus '" + text + "': at most " + std::to_string(kMaxGuestDevices) + " devices");
        if (comma == std::string::npos) return out;
        at = comma + 1;
    }
}

const std::set<std::string>& vgpu_option_names() {
    static const std::set<std::string> names = {"vgpu", "gpu-worker", "doorbell", "gpu-mem-quota", "max-handles",
                                                "max-module", "ring-max", "poll-spin-us", "poll-max-us", "gpus",
                                                "max-registrations", "max-registered", "max-alias-mappings", "cublas",
                                                "max-graph-nodes", "ram-registration",
                                                "worker-sandbox", "gpu-remote", "gpu-key"};
    static const std::set<std::string> with_share = [] {
        std::set<std::string> all = names;
        all.insert(gpu_share_option_names().begin(), gpu_share_option_names().end());
        return all;
    }();
    return with_share;
}

const char* vgpu_options_help() {
    static const std::string text = std::string(
           "  --vgpu auto|cuda|host|none  the vGPU's backend (default auto: CUDA where a GPU\n"
           "                      and driver exist, else the host backend, which runs CPU\n"
           "                      reference kernels and says so)\n"
           "  --gpus LIST         the guest's devices, as physical GPU ordinals (default 0);\n"
           "                      one may repeat: 0,0,0,0 is four devices on GPU 0, each\n"
           "                      with its own context (no bus between them)\n"
           "  --gpu-worker process|inline|always  where the CUDA backend runs (default\n"
           "                      process: a worker process per VM that owns the ring,\n"
           "                      replaced after a sticky GPU fault; inline: in the VMM,\n"
           "                      where such a fault ends CUDA for good; always: a worker\n"
           "                      for the host backend too)\n"
           "  --worker-sandbox on|off  a GPU worker process confines itself once its backend\n"
           "                      has started: seccomp allowlist, no new privileges, its own\n"
           "                      network and mount namespaces (default on; off under\n"
           "                      --gpu-share mps; docs/security.md)\n"
           "  --doorbell adaptive|trap|ioeventfd|poll  how the guest's kick reaches the ring's\n"
           "                      consumer (default adaptive: polls while commands come, sleeps\n"
           "                      on an ioeventfd once idle; the guest kicks only then)\n"
           "  --ram-registration lazy|eager  register guest RAM with the GPU as copies first\n"
           "                      reach each part of it (default lazy), or all of it when\n"
           "                      the vGPU starts (eager: pins and zeroes every page)\n"
           "  --gpu-mem-quota SIZE  device memory one VM may hold (default: run with one VM,\n"
           "                      all of the GPU's; otherwise 4G per VM)\n"
           "  --max-handles N     per handle table (default 65536)\n"
           "  --max-graph-nodes N  CUDA graph nodes one VM may hold in graphs, executable\n"
           "                      graphs and open captures (default 65536)\n"
           "  --max-module SIZE   largest module image (default 64M)\n"
           "  --max-registrations N  registered guest buffers one VM may hold (default 1024)\n"
           "  --max-registered SIZE  their bytes together (default: the VM's RAM size)\n"
           "  --max-alias-mappings N  host mappings their aliases may take (default 262144,\n"
           "                      fewer when vm.max_map_count leaves less: VMs in one\n"
           "                      process share it evenly)\n"
           "  --ring-max N        largest command ring, entries, power of two (default 4096)\n"
           "  --poll-spin-us N    poll doorbell: spin this long before sleeping (default 50)\n"
           "  --poll-max-us N     adaptive doorbell: the cap of its polling window (default 20000)\n"
           "  --gpu-remote HOST:PORT  run the vGPU's commands on a GPU server on another\n"
           "                      host (kvmtool-gpu gpu-server --help; docs/remote.md): the\n"
           "                      server's GPUs, backend and per-VM limits apply; guest RAM\n"
           "                      moves by UCX RMA, and zero-copy is refused\n"
           "  --gpu-key FILE      the key the server was given (mode 0600; needed with\n"
           "                      --gpu-remote; both sides prove they hold it)\n"
           "  --cublas PATH       the host's libcublas for the guests' cuBLAS calls (default:\n"
           "                      libcublas.so.13 on the loader's path, then the CUDA\n"
           "                      toolkit's lib64); the run's log says which was loaded\n") +
        gpu_share_options_help();
    return text.c_str();
}

std::optional<VgpuSpec> parse_vgpu_spec(const ArgParser& p) {
    const std::string which = p.get_or("vgpu", "auto");
    if (which == "none") return std::nullopt;
    VgpuSpec c;
    vgpu::BackendChoice backend;
    if (!vgpu::parse_backend_choice(which, &backend))
        throw UsageError("--vgpu '" + which + "': expected auto, cuda, host or none");
    c.backend = backend == vgpu::BackendChoice::Cuda ? VgpuBackend::Cuda
                : backend == vgpu::BackendChoice::Host ? VgpuBackend::Host
                                                       : VgpuBackend::Auto;
    const std::string worker = p.get_or("gpu-worker", "process");
    vgpu::GpuWorker where;
    if (!vgpu::parse_gpu_worker(worker, &where))
        throw UsageError("--gpu-worker '" + worker + "': expected process, inline or always");
    c.worker = where == vgpu::GpuWorker::Inline ? GpuWorker::Inline
               : where == vgpu::GpuWorker::Always ? GpuWorker::Always
                                                  : GpuWorker::Process;
    // On by default from the command line (measured on the H100, docs/security.md);
    // under --gpu-share mps off unless asked (an MPS client's calls are not measured).
    const std::string sandbox = p.get_or("worker-sandbox", p.get_or("gpu-share", "contexts") == "mps" ? "off" : "on");
    if (sandbox != "on" && sandbox != "off") throw UsageError("--worker-sandbox '" + sandbox + "': expected on or off");
    c.worker_sandbox = sandbox == "on";
    const std::string bell = p.get_or("doorbell", vgpu::to_string(vgpu::VgpuOptions{}.doorbell));
    vgpu::DoorbellMode mode;
    if (!vgpu::parse_doorbell(bell, &mode))
        throw UsageError("--doorbell '" + bell + "': expected adaptive, trap, ioeventfd or poll");
    c.doorbell = mode == vgpu::DoorbellMode::Trap        ? Doorbell::Trap
                 : mode == vgpu::DoorbellMode::Ioeventfd ? Doorbell::Ioeventfd
                 : mode == vgpu::DoorbellMode::Poll      ? Doorbell::Poll
                                                         : Doorbell::Adaptive;
    const std::string reg = p.get_or("ram-registration", "lazy");
    if (reg != "lazy" && reg != "eager") throw UsageError("--ram-registration '" + reg + "': expected lazy or eager");
    c.lazy_ram_registration = reg == "lazy";
    if (auto v = p.get("gpu-mem-quota")) c.device_mem_quota = parse_size(*v, "--gpu-mem-quota");
    if (auto v = p.get("max-handles")) c.max_handles = parse_u32(*v, "--max-handles");
    if (auto v = p.get("max-graph-nodes")) c.max_graph_nodes = parse_u32(*v, "--max-graph-nodes");
    if (auto v = p.get("max-module")) c.max_module_bytes = parse_size(*v, "--max-module");
    if (auto v = p.get("max-registrations")) c.max_registrations = parse_u32(*v, "--max-registrations");
    if (auto v = p.get("max-registered")) c.max_registered_bytes = parse_size(*v, "--max-registered");
    if (auto v = p.get("max-alias-mappings")) c.max_alias_mappings = parse_u64(*v, "--max-alias-mappings");
    if (auto v = p.get("ring-max")) c.max_ring = parse_u32(*v, "--ring-max");
    if (auto v = p.get("poll-spin-us")) c.poll_spin_us = parse_u32(*v, "--poll-spin-us");
    if (auto v = p.get("poll-max-us")) c.poll_max_us = parse_u32(*v, "--poll-max-us");
    if (auto v = p.get("gpus")) c.gpus = parse_gpu_list(*v);
    if (auto v = p.get("gpu-remote")) c.remote = *v;
    if (auto v = p.get("gpu-key")) c.remote_key_file = *v;
    if (c.remote.empty() != c.remote_key_file.empty())
        throw UsageError(c.remote.empty() ? "--gpu-key is for --gpu-remote HOST:PORT" : "--gpu-remote needs --gpu-key FILE (the key the GPU server was given)");
    if (auto v = p.get("cublas")) {
#ifdef KVMGPU_HAVE_CUDA_BACKEND
        c.cublas_path = *v;
#else
        throw UsageError("--cublas: this build has no CUDA backend (no cuda.h at build time)");
#endif
    }
    // The limits are checked (vgpu::validate) before anything starts.
    try {
        api::to_vgpu_config(c);
    } catch (const Error& e) {
        throw UsageError(e.what());
    }
    const GpuShareOptions share = parse_gpu_share_flags(p);
    if (share.mode == GpuShareMode::Mps) {
        if (c.worker == GpuWorker::Inline)
            throw UsageError("--gpu-share mps needs GPU worker processes (not --gpu-worker inline): each is an MPS client");
        if (c.backend == VgpuBackend::Host && c.worker != GpuWorker::Always)
            throw UsageError("--gpu-share mps: --vgpu host runs no CUDA (--gpu-worker always tests the plumbing)");
        // Starts or attaches to the daemon, held until the spec's last copy goes.
        c.sharing = GpuSharing::open_mps({share.mps_pipe, share.thread_percentage, share.pinned_mem_limit,
                                          share.fallback == MpsFallback::Contexts},
                                         c.gpus);
    }
    return c;
}

std::optional<VgpuConfig> parse_vgpu_flags(const ArgParser& p) {
    auto spec = parse_vgpu_spec(p);
    if (!spec) return std::nullopt;
    // The benches' guests: each its own quota (VgpuOptions' default) unless --gpu-mem-quota says.
    if (!spec->device_mem_quota) spec->device_mem_quota = vgpu::VgpuOptions{}.device_mem_quota;
    try {
        return api::to_vgpu_config(*spec);
    } catch (const Error& e) {
        throw UsageError(e.what());
    }
}

} // namespace kvmgpu::cli
