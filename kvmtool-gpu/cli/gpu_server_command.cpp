#include "kvmtool-gpu/cli/gpu_server_command.h"

#include <cstdio>
#include <stdexcept>

#include "kvmtool-gpu/cli/interrupt_stop.h"
#include "kvmtool-gpu/cli/vgpu_flags.h"
#include "kvmtool-gpu/remote/gpu_server.h"
#include "kvmtool-gpu/util/arg_parser.h"

namespace kvmgpu::cli {

namespace {

const char* kHelp =
    "usage: kvmtool-gpu gpu-server --key FILE [options]\n"
    "\n"
    "Runs the vGPU commands of VMs on other hosts (run --gpu-remote HOST:PORT):\n"
    "each VMM that proves it holds the key gets a session with a backend on this\n"
    "host's GPUs and the same per-VM limits a local VM has. Over UCX: RDMA, TCP or\n"
    "shared memory, whichever UCX finds (UCX_TLS picks). docs/remote.md.\n"
    "\n"
    "  --key FILE          the shared key (at least 16 bytes, mode 0600), given to\n"
    "                      each VMM out of band: head -c 32 /dev/urandom | base64 > FILE\n"
    "  --listen ADDR       HOST:PORT or :PORT to listen on (default :18515)\n"
    "  --vgpu auto|cuda|host  the sessions' backend (default auto)\n"
    "  --gpus LIST         the GPUs each session's devices are (default 0)\n"
    "  --gpu-mem-quota SIZE  device memory one VM may hold (default 4G)\n"
    "  --max-handles N     per handle table, per VM (default 65536)\n"
    "  --max-graph-nodes N  CUDA graph nodes per VM (default 65536)\n"
    "  --max-module SIZE   largest module image (default 64M)\n"
    "  --max-sessions N    VMs served at once (default 16)\n"
    "  --max-guest-ram SIZE  the RAM one VM may have (the server keeps a copy of\n"
    "                      what its commands touch; default 256G)\n";

} // namespace

int gpu_server_command(const std::vector<std::string>& args) {
    ArgParser p({"key", "listen", "vgpu", "gpus", "gpu-mem-quota", "max-handles", "max-graph-nodes", "max-module",
                 "max-sessions", "max-guest-ram"},
                {"help"});
    p.parse(args);
    if (p.has("help")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    remote::GpuServerOptions o;
    const auto key = p.get("key");
    if (!key) throw UsageError("gpu-server needs --key FILE (see gpu-server --help)");
    std::string why;
    if (!remote::load_shared_key(*key, &o.key, &why)) throw UsageError(why);
    o.listen = p.get_or("listen", o.listen);
    const std::string which = p.get_or("vgpu", "auto");
    if (!vgpu::parse_backend_choice(which, &o.backend)) throw UsageError("--vgpu '" + which + "': expected auto, cuda or host");
    if (auto v = p.get("gpus")) o.gpus = parse_gpu_list(*v);
    if (auto v = p.get("gpu-mem-quota")) o.vgpu.device_mem_quota = parse_size(*v, "--gpu-mem-quota");
    const auto u32 = [](const std::string& text, const char* what) {
        const uint64_t n = parse_u64(text, what);
        if (n > UINT32_MAX) throw UsageError(std::string(what) + " '" + text + "': too large");
        return static_cast<uint32_t>(n);
    };
    if (auto v = p.get("max-handles")) o.vgpu.max_handles = u32(*v, "--max-handles");
    if (auto v = p.get("max-graph-nodes")) o.vgpu.max_graph_nodes = u32(*v, "--max-graph-nodes");
    if (auto v = p.get("max-module")) o.vgpu.max_module_bytes = parse_size(*v, "--max-module");
    if (auto v = p.get("max-sessions")) {
        const uint64_t n = parse_u64(*v, "--max-sessions");
        if (n == 0 || n > 1024) throw UsageError("--max-sessions '" + *v + "': 1 to 1024");
        o.max_sessions = static_cast<uint32_t>(n);
    }
    if (auto v = p.get("max-guest-ram")) o.max_guest_ram = parse_size(*v, "--max-guest-ram");

    std::atomic<bool> stop{false};
    StopOnInterrupt on_signal([&](int) { stop = true; });
    auto server = remote::GpuServer::start(o, &why);
    if (!server) throw std::runtime_error("gpu-server: " + why);
    std::printf("gpu-server: listening on %s (port %u), backend %s, up to %u VMs\n", o.listen.c_str(), server->port(),
                vgpu::to_string(o.backend), o.max_sessions);
    std::fflush(stdout);
    server->run(stop);
    const auto& s = server->stats();
    std::printf("gpu-server: stopped; %llu sessions, %llu refused, %llu commands\n",
                static_cast<unsigned long long>(s.sessions_started.load()),
                static_cast<unsigned long long>(s.refused.load()), static_cast<unsigned long long>(s.commands.load()));
    return 0;
}

} // namespace kvmgpu::cli
