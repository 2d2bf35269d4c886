// The GPU server: runs the vGPU command engines of VMs on other hosts
// (remote_engine.h). Each connection that proves the shared key gets a
// session in a process of its own (session_process.h): a copy of the VM's
// RAM layout (pages appear as commands use them), a backend on the server's
// GPUs with the same per-VM limits as a local VM (VgpuOptions), and the
// dispatch that checks every command exactly as the VMM's own worker does.
// A VMM that goes away (or breaks the protocol) ends its session, and its
// process with everything the session held.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backend_factory.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_options.h"
#include "kvmtool-gpu/remote/key_proof.h"

namespace kvmgpu::remote {

struct GpuServerOptions {
    std::string listen = ":18515"; // HOST:PORT or :PORT (port 0: any free one)
    SharedKey key;
    vgpu::BackendChoice backend = vgpu::BackendChoice::Auto;
    std::vector<int> gpus = {0};
    vgpu::VgpuOptions vgpu;                 // each session's limits (quota, handles, ...)
    uint64_t max_guest_ram = 256ull << 30;  // the RAM one VM may describe (its copy's size)
    uint32_t max_sessions = 16;
};

// Counted by the server and its session processes (shared memory).
struct GpuServerStats {
    std::atomic<uint64_t> sessions_started{0}, sessions_ended{0}, refused{0}, commands{0}, batches{0};
};

class GpuServer {
public:
    // Listens; nullptr with *why (one line) when UCX or the address fail.
    // Call it before this process has a UCX context or a CUDA context of
    // its own: the session processes are forked from it as it is now.
    static std::unique_ptr<GpuServer> start(GpuServerOptions opts, std::string* why);
    ~GpuServer(); // ends every session (their VMMs see the GPU lost)
    uint16_t port() const;
    // Accepts and serves until `stop`, then ends every session.
    void run(const std::atomic<bool>& stop);
    const GpuServerStats& stats() const;
    // The processes of the sessions running now.
    std::vector<pid_t> session_pids() const;

private:
    struct State;
    explicit GpuServer(std::unique_ptr<State> s);
    std::unique_ptr<State> s_;
};

} // namespace kvmgpu::remote
