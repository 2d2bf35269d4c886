// The zygote's loop (one recipe in, one clone, one pid out) and the VMM's
// side of its socket.
#include "kvmtool-gpu/devices/vgpu_worker/worker_zygote.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <system_error>
#include <vector>

#include "kvmtool-gpu/util/close_descriptors.h"
#include "kvmtool-gpu/util/descriptor_passing.h"

namespace kvmgpu::vgpu {

static_assert(kRecipeMaxFds <= kMaxPassedDescriptors, "a recipe's descriptors fit one message");

namespace {

constexpr int kReplyTimeoutMs = 10'000; // a clone takes milliseconds; a zygote that does not answer is lost

struct Zygote {
    std::mutex mu;  // one request at a time on the socket
    pid_t pid = -1;
    pid_t owner = -1; // the process the zygote belongs to (a forked child has none)
    int sock = -1;
};

Zygote& zygote() {
    static Zygote z;
    return z;
}

void reply(int sock, int32_t value) { send(sock, &value, sizeof value, MSG_NOSIGNAL); }

// A worker: a clone of this (single-threaded) process whose parent is the
// VMM. glibc's fork() cannot give CLONE_PARENT; the raw clone leaves the
// child's thread descriptor with the zygote's thread id, which glibc reads
// only for robust and priority-inheritance mutexes.
pid_t clone_for_parent() {
    return static_cast<pid_t>(syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, 0));
}

[[noreturn]] void serve(int sock, pid_t vmm) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != vmm) _exit(0); // the VMM ended before the line above
    prctl(PR_SET_NAME, "vgpu-zygote");
    // Nothing of the VMM's stays open here but this socket: its KVM and
    // its VMs' descriptors, where a program started the zygote late.
    const int keep[] = {sock};
    close_descriptors_but(keep);
    std::vector<uint8_t> buf(kRecipeMaxBytes);
    for (;;) {
        const ReceivedMessage got = receive_with_descriptors(sock, buf);
        if (got.bytes == 0) _exit(0); // the VMM closed its end
        if (got.bytes < 0) _exit(1);
        pid_t pid = -EMSGSIZE;
        if (!got.truncated) {
            pid = clone_for_parent();
            if (pid == 0) {
                close(sock);
                run_worker_from_recipe(std::span<const uint8_t>(buf.data(), static_cast<size_t>(got.bytes)), got.fds, vmm);
            }
            if (pid < 0) pid = -errno;
        }
        for (const int fd : got.fds) close(fd);
        reply(sock, pid);
    }
}

void start_locked(Zygote& z) {
    if (z.owner == getpid() && z.pid > 0) return;
    if (z.sock >= 0) close(z.sock); // a parent process's zygote: not this process's to use
    z.pid = -1, z.owner = -1, z.sock = -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        throw std::system_error(errno, std::generic_category(), "socketpair for the GPU worker zygote");
    std::fflush(nullptr); // nothing buffered is copied into the zygote (its workers write to stderr only)
    const pid_t vmm = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        const int err = errno;
        close(sv[0]), close(sv[1]);
        throw std::system_error(err, std::generic_category(), "fork of the GPU worker zygote");
    }
    if (pid == 0) {
        close(sv[0]);
        serve(sv[1], vmm);
    }
    close(sv[1]);
    z.pid = pid, z.owner = vmm, z.sock = sv[0];
}

// Why the zygote did not answer, in a few words; reaps it if it ended.
std::string lost(Zygote& z, const char* what) {
    std::string text = "the GPU worker zygote (pid " + std::to_string(z.pid) + ") " + what;
    int st = 0;
    if (waitpid(z.pid, &st, WNOHANG) == z.pid) {
        text += WIFSIGNALED(st) ? ": it was killed by signal " + std::to_string(WTERMSIG(st))
                                : ": it exited with status " + std::to_string(WEXITSTATUS(st));
        close(z.sock);
        z.sock = -1, z.pid = -1; // gone for good: no worker starts again in this process
    }
    return text;
}

} // namespace

void start_worker_zygote() {
    Zygote& z = zygote();
    std::lock_guard lk(z.mu);
    start_locked(z);
}

pid_t worker_zygote_pid() {
    Zygote& z = zygote();
    std::lock_guard lk(z.mu);
    return z.owner == getpid() ? z.pid : -1;
}

pid_t spawn_gpu_worker(const WorkerRecipe& recipe, std::string* why) {
    std::vector<int> fds;
    std::vector<uint8_t> bytes;
    try {
        bytes = encode_recipe(recipe, &fds);
    } catch (const std::exception& e) {
        return *why = e.what(), -1;
    }
    Zygote& z = zygote();
    std::lock_guard lk(z.mu);
    if (z.owner != getpid()) {
        try {
            start_locked(z);
        } catch (const std::exception& e) {
            return *why = e.what(), -1;
        }
    }
    if (z.sock < 0) return *why = "the GPU worker zygote has ended: no GPU worker can start", -1;
    const ssize_t sent = send_with_descriptors(z.sock, bytes, fds);
    if (sent < 0) return *why = lost(z, (std::string("took no recipe: ") + std::strerror(errno)).c_str()), -1;
    pollfd p{z.sock, POLLIN, 0};
    int ready;
    while ((ready = poll(&p, 1, kReplyTimeoutMs)) < 0 && errno == EINTR) {
    }
    int32_t answer = 0;
    if (ready <= 0 || recv(z.sock, &answer, sizeof answer, 0) != static_cast<ssize_t>(sizeof answer))
        return *why = lost(z, "did not answer"), -1;
    if (answer < 0) return *why = std::string("the GPU worker zygote could not start a worker: ") + std::strerror(-answer), -1;
    return answer;
}

} // namespace kvmgpu::vgpu
