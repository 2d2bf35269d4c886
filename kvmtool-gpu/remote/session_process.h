// Each VMM's session on the GPU server runs in a process of its own: a
// sticky driver fault in one VM's kernel ends CUDA in that process only (the
// driver's rule for such faults is the whole process), and no session's
// memory is another's. Session processes are forked from a zygote the server
// forks when it starts, before it has made a thread, a UCX context or a
// CUDA call; each makes its own UCX context, listener and backend, serves
// one VMM and exits.
//
// The server's front door proves the key, asks for a session process and
// redirects the VMM to that process's port (REDIRECT, remote_wire.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kvmtool-gpu/remote/gpu_server.h"

namespace kvmgpu::remote {

// One session process as the server sees it. control: the server's end of
// a socket pair with it. The session stops when the server shuts its end
// down, and the server sees the socket hang up when the process ends.
struct SessionProcess {
    pid_t pid = -1;
    uint16_t port = 0;
    int control = -1;
};

class SessionSpawner {
public:
    // Forks the zygote, which keeps `opts` and writes to `stats` (memory
    // shared with the server). nullptr with *why (one line).
    static std::unique_ptr<SessionSpawner> start(const GpuServerOptions& opts, GpuServerStats* stats, std::string* why);
    ~SessionSpawner(); // the zygote ends; sessions already running go on
    SessionSpawner(const SessionSpawner&) = delete;
    SessionSpawner& operator=(const SessionSpawner&) = delete;

    // A new session process, listening for one VMM (on the host part of
    // opts.listen, a port of its own), or nullopt with *why. Any thread.
    std::optional<SessionProcess> spawn(std::string* why);

private:
    SessionSpawner(int sock, pid_t pid) : sock_(sock), pid_(pid) {}
    std::mutex mu_; // one request at a time on the zygote's socket
    int sock_;
    pid_t pid_;
};

} // namespace kvmgpu::remote
