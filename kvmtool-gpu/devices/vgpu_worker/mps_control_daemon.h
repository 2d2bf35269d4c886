// One MPS control daemon (nvidia-cuda-mps-control) that this run's GPU
// workers are clients of: one the run started itself, in a private 0700
// directory with pipe/ and log/ of its own, stopped when the run ends; or
// one given with --mps-pipe DIR, checked and never stopped.
//
// A daemon the run started is stopped however the run ends: the destructor
// asks it to quit (`echo quit | nvidia-cuda-mps-control`), and a guard
// process, forked at start and blocked on a pipe only this process holds,
// does the same if this process dies first (a second Ctrl-C, a crash, a
// kill). Every failure is one line (MpsError), naming the path or command.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "kvmtool-gpu/devices/vgpu_worker/mps_server_group.h"

namespace kvmgpu::vgpu {

struct MpsError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline constexpr const char* kMpsControlProgram = "nvidia-cuda-mps-control";

// The program's path on `path_list` (a PATH value), or "" when absent.
std::string find_program_on_path(const std::string& name, const std::string& path_list);

// "" when `dir` can be an MPS pipe directory for this process: a directory
// (not a symlink) owned by us or by root, not writable by others, holding
// a `control` socket (or named pipe); else why not, in one line.
std::string check_mps_pipe_dir(const std::string& dir);

class MpsControlDaemon {
public:
    // Starts `nvidia-cuda-mps-control -d` (found on PATH) with a pipe and a
    // log directory of its own, and waits (bounded) for its control socket.
    static std::unique_ptr<MpsControlDaemon> start(std::chrono::milliseconds bound = std::chrono::seconds(10));
    // A daemon already running at `pipe_dir` (check_mps_pipe_dir).
    static std::unique_ptr<MpsControlDaemon> attach(const std::string& pipe_dir);
    ~MpsControlDaemon(); // stop()
    MpsControlDaemon(const MpsControlDaemon&) = delete;
    MpsControlDaemon& operator=(const MpsControlDaemon&) = delete;

    // A started daemon: quit, bounded; its directory removed. Idempotent;
    // nothing for an attached one. "" or what went wrong (one line).
    std::string stop();
    // The daemon still runs: where it wrote a pid file, that process lives;
    // else its control socket takes a connection; else it answers
    // get_server_list.
    bool alive() const;

    bool started_here() const { return started_; }
    const std::string& pipe_dir() const { return pipe_dir_; }
    const std::string& log_dir() const { return log_dir_; } // "" for an attached daemon
    // CUDA_MPS_PIPE_DIRECTORY (and CUDA_MPS_LOG_DIRECTORY for a daemon started here).
    EnvList client_env() const;

private:
    MpsControlDaemon() = default;
    std::string control_path_; // the program, for quit and get_server_list
    std::string root_;         // the private directory (started here)
    std::string pipe_dir_, log_dir_;
    bool started_ = false, stopped_ = false;
    pid_t guard_ = -1;   // the guard process
    int guard_fd_ = -1;  // its pipe's write end
};

} // namespace kvmgpu::vgpu
