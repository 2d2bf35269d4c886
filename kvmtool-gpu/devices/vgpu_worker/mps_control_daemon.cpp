#include "kvmtool-gpu/devices/vgpu_worker/mps_control_daemon.h"

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

extern char** environ;

namespace kvmgpu::vgpu {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kPipeVar = "CUDA_MPS_PIPE_DIRECTORY";
constexpr const char* kLogVar = "CUDA_MPS_LOG_DIRECTORY";
constexpr std::chrono::seconds kCommandBound{10}; // one nvidia-cuda-mps-control command
constexpr std::chrono::seconds kQuitBound{5};     // after quit, for the daemon to go

// The guard: sleeps on its stdin (a pipe whose write end only the VMM
// holds) and, unless told "done", stops the daemon and removes its
// directory once the VMM is gone. Ignores the terminal's signals: a Ctrl-C
// that ends the VMM must not end the guard too.
constexpr const char* kGuardScript = "trap '' INT TERM HUP\n"
                                     "PATH=/usr/bin:/bin:$PATH\n"
                                     "read -r line\n"
                                     "[ \"$line\" = done ] && exit 0\n"
                                     "echo quit | \"$1\" >/dev/null 2>&1\n"
                                     "sleep 1\n"
                                     "rm -rf -- \"$2\"\n";

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// The process's environment with `extra` set over it.
std::vector<std::string> environment_with(const EnvList& extra) {
    std::vector<std::string> out;
    for (char** e = environ; e && *e; ++e) {
        const std::string kv(*e);
        bool replaced = false;
        for (const auto& [k, v] : extra) replaced = replaced || kv.rfind(k + "=", 0) == 0;
        if (!replaced) out.push_back(kv);
    }
    for (const auto& [k, v] : extra) out.push_back(k + "=" + v);
    return out;
}

std::vector<char*> pointers(std::vector<std::string>& v) {
    std::vector<char*> p;
    for (auto& s : v) p.push_back(s.data());
    p.push_back(nullptr);
    return p;
}

// Waits for `pid` up to `bound`, SIGKILLs it past that. Its exit status, or -1.
int wait_bounded(pid_t pid, Clock::duration bound) {
    const auto until = Clock::now() + bound;
    for (;;) {
        int st = 0;
        const pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (r < 0 && errno != EINTR) return -1;
        if (Clock::now() >= until) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// Runs the control program with `args`, `input` on its stdin; its exit
// status (-1: killed after kCommandBound, or not run).
int run_control(const std::string& program, const std::vector<std::string>& args, const std::string& input,
                const EnvList& env) {
    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0) return -1;
    // Written before the program runs (a pipe holds a few KiB): no SIGPIPE
    // can come from a program that does not read it.
    if (!input.empty() && write(in[1], input.data(), input.size()) != static_cast<ssize_t>(input.size())) {
        close(in[0]), close(in[1]);
        return -1;
    }
    close(in[1]);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    std::vector<std::string> argv{program};
    argv.insert(argv.end(), args.begin(), args.end());
    auto envs = environment_with(env);
    auto argp = pointers(argv);
    auto envp = pointers(envs);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, program.c_str(), &fa, nullptr, argp.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    return rc == 0 ? wait_bounded(pid, kCommandBound) : -1;
}

bool is_socket(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

bool connects(const std::string& path) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.size() >= sizeof a.sun_path) return false;
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    close(fd);
    return ok;
}

// A process that exists and has not ended (a zombie whose parent does not
// reap it still answers kill(pid, 0)).
bool process_runs(pid_t pid) {
    if (kill(pid, 0) != 0 && errno != EPERM) return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true; // no /proc: kill's answer stands
    const size_t paren = line.rfind(')');
    return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

int remove_entry(const char* path, const struct stat*, int, FTW*) { return ::remove(path); }

} // namespace

std::string find_program_on_path(const std::string& name, const std::string& path_list) {
    size_t at = 0;
    while (at <= path_list.size()) {
        const size_t colon = path_list.find(':', at);
        std::string dir = path_list.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
        if (dir.empty()) dir = ".";
        const std::string p = dir + "/" + name;
        struct stat st;
        if (stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0) return p;
        if (colon == std::string::npos) break;
        at = colon + 1;
    }
    return "";
}

std::string check_mps_pipe_dir(const std::string& dir) {
    const std::string what = "--mps-pipe " + dir + ": ";
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0) return what + std::strerror(errno);
    if (S_ISLNK(st.st_mode)) return what + "is a symbolic link (give the directory itself)";
    if (!S_ISDIR(st.st_mode)) return what + "is not a directory";
    if (st.st_uid != geteuid() && st.st_uid != 0)
        return what + "is owned by uid " + std::to_string(st.st_uid) + ", not by us (uid " +
               std::to_string(geteuid()) + ") or root";
    if (st.st_mode & S_IWOTH) return what + "is writable by every user: anyone could stand in for the daemon";
    const std::string control = dir + "/control";
    if (lstat(control.c_str(), &st) != 0) return what + "holds no control socket (no MPS control daemon runs there)";
    // A socket on current drivers; a named pipe on old ones.
    if (!S_ISSOCK(st.st_mode) && !S_ISFIFO(st.st_mode)) return what + "its 'control' is not a socket or a named pipe";
    return "";
}

std::unique_ptr<MpsControlDaemon> MpsControlDaemon::attach(const std::string& pipe_dir) {
    if (const std::string why = check_mps_pipe_dir(pipe_dir); !why.empty()) throw MpsError(why);
    std::unique_ptr<MpsControlDaemon> d(new MpsControlDaemon);
    d->pipe_dir_ = pipe_dir;
    const char* path = std::getenv("PATH");
    d->control_path_ = find_program_on_path(kMpsControlProgram, path ? path : "");
    if (!d->alive()) throw MpsError("--mps-pipe " + pipe_dir + ": no MPS control daemon answers there");
    return d;
}

std::unique_ptr<MpsControlDaemon> MpsControlDaemon::start(std::chrono::milliseconds bound) {
    const char* path = std::getenv("PATH");
    const std::string control = find_program_on_path(kMpsControlProgram, path ? path : "");
    if (control.empty())
        throw MpsError(std::string(kMpsControlProgram) + " is not on PATH (is the NVIDIA driver's MPS installed?)");
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/kvmgpu-mps-XXXXXX";
    if (!mkdtemp(tmpl.data())) throw MpsError(errno_text("mkdtemp " + tmpl));
    std::unique_ptr<MpsControlDaemon> d(new MpsControlDaemon);
    d->control_path_ = control;
    d->root_ = tmpl;
    d->pipe_dir_ = tmpl + "/pipe";
    d->log_dir_ = tmpl + "/log";
    d->started_ = true; // from here the destructor cleans up
    for (const auto& dir : {d->pipe_dir_, d->log_dir_})
        if (mkdir(dir.c_str(), 0700) != 0) throw MpsError(errno_text("mkdir " + dir));

    // The guard first: from here on, however this process ends, the daemon goes.
    int g[2];
    if (pipe2(g, O_CLOEXEC) != 0) throw MpsError(errno_text("pipe2"));
    std::vector<std::string> gargv{"sh", "-c", kGuardScript, "kvmgpu-mps-guard", control, d->root_};
    auto genv = environment_with(d->client_env());
    auto gargp = pointers(gargv);
    auto genvp = pointers(genv);
    const pid_t guard = fork();
    if (guard < 0) throw MpsError(errno_text("fork of the MPS guard"));
    if (guard == 0) {
        setsid(); // out of the terminal's process group: its Ctrl-C is the VMM's to handle
        if (dup2(g[0], 0) != 0) _exit(127);
        execve("/bin/sh", gargp.data(), genvp.data());
        _exit(127);
    }
    close(g[0]);
    d->guard_ = guard;
    d->guard_fd_ = g[1];

    const int rc = run_control(control, {"-d"}, "", d->client_env());
    if (rc != 0)
        throw MpsError(control + " -d " + (rc < 0 ? "did not finish" : "exited with status " + std::to_string(rc)) +
                       " (its log: " + d->log_dir_ + "/control.log)");
    const auto until = Clock::now() + bound;
    while (!d->alive()) {
        if (Clock::now() >= until)
            throw MpsError("the MPS control daemon did not open " + d->pipe_dir_ + "/control within " +
                           std::to_string(bound.count() / 1000) + " s (its log: " + d->log_dir_ + "/control.log)");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return d;
}

MpsControlDaemon::~MpsControlDaemon() { stop(); }

bool MpsControlDaemon::alive() const {
    std::ifstream pidfile(pipe_dir_ + "/nvidia-cuda-mps-control.pid");
    long pid = 0;
    if (pidfile >> pid && pid > 0) return process_runs(static_cast<pid_t>(pid));
    const std::string control = pipe_dir_ + "/control";
    if (is_socket(control)) return connects(control);
    // No pid file, no socket to try: ask the daemon itself (bounded).
    return !control_path_.empty() && run_control(control_path_, {}, "get_server_list\n", client_env()) == 0;
}

std::string MpsControlDaemon::stop() {
    if (!started_ || stopped_) return "";
    stopped_ = true;
    std::string why;
    if (alive()) {
        const int rc = run_control(control_path_, {}, "quit\n", client_env());
        const auto until = Clock::now() + kQuitBound;
        while (alive() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (alive())
            why = "the MPS control daemon at " + pipe_dir_ + " still runs after quit (status " + std::to_string(rc) + ")";
    }
    if (nftw(root_.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && why.empty())
        why = errno_text("removing " + root_);
    if (guard_fd_ >= 0) {
        // Done: the guard has nothing left to do.
        [[maybe_unused]] const ssize_t n = write(guard_fd_, "done\n", 5);
        close(guard_fd_);
        guard_fd_ = -1;
    }
    if (guard_ > 0) wait_bounded(guard_, kCommandBound);
    guard_ = -1;
    return why;
}

EnvList MpsControlDaemon::client_env() const {
    EnvList env{{kPipeVar, pipe_dir_}};
    if (!log_dir_.empty()) env.emplace_back(kLogVar, log_dir_);
    return env;
}

} // namespace kvmgpu::vgpu
