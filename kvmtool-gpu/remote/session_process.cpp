#include "kvmtool-gpu/remote/session_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "kvmtool-gpu/remote/remote_wire.h"
#include "kvmtool-gpu/remote/server_session.h"
#include "kvmtool-gpu/remote/ucx_link.h"
#include "kvmtool-gpu/util/close_descriptors.h"
#include "kvmtool-gpu/util/descriptor_passing.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::remote {

namespace {

// What a session process tells the server once it listens (port 0: it could not).
struct SessionHello {
    int32_t pid;
    uint32_t port;
};

// The descriptor a request carried; -1 when the server went (or sent none).
int receive_descriptor(int sock) {
    for (;;) {
        uint8_t byte;
        ReceivedMessage got = receive_with_descriptors(sock, {&byte, 1});
        if (got.bytes <= 0) {
            for (const int fd : got.fds) close(fd);
            return -1;
        }
        if (got.fds.size() == 1 && !got.truncated) return got.fds[0];
        for (const int fd : got.fds) close(fd);
    }
}

// "HOST:PORT" -> "HOST:0" (":PORT" -> ":0": every address, as the server).
std::string any_port_on_host_of(const std::string& listen) {
    const size_t colon = listen.rfind(':');
    return (colon == std::string::npos ? std::string() : listen.substr(0, colon)) + ":0";
}

// The session process: listens, says where, serves the first VMM that
// proves the key (until the handshake's deadline), and ends.
void run_session(int control, const GpuServerOptions& opts, GpuServerStats& stats) {
    std::string why;
    std::shared_ptr<UcxContext> ctx = UcxContext::create(&why);
    std::unique_ptr<UcxListener> listener = ctx ? UcxListener::listen(ctx, any_port_on_host_of(opts.listen), &why) : nullptr;
    const SessionHello hello{static_cast<int32_t>(getpid()), listener ? listener->port() : 0u};
    if (write(control, &hello, sizeof hello) != sizeof hello || !listener) {
        if (!listener) log_warn("gpu-server: a session process could not listen: %s", why.c_str());
        return;
    }
    std::atomic<bool> stop{false};
    std::thread watch([&] { // the server shut its end down, or went
        pollfd p{control, POLLIN | POLLRDHUP, 0};
        while (!stop.load()) {
            if (poll(&p, 1, 100) > 0) stop = true;
        }
    });
    const auto deadline = Clock::now() + kHandshakeTimeout;
    while (!stop.load() && Clock::now() < deadline) {
        ucp_conn_request_h request = listener->take(std::min(deadline, Clock::now() + std::chrono::milliseconds(200)));
        if (request && serve_session(ctx, request, opts, stats, stop)) break;
    }
    stop = true;
    watch.join();
}

[[noreturn]] void zygote_loop(int sock, const GpuServerOptions& opts, GpuServerStats& stats) {
    const int keep[] = {sock};
    close_descriptors_but(keep);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr); // the server may block signals it waits for
    signal(SIGINT, SIG_IGN);  // a terminal's interrupt is the server's to act on: it ends the sessions
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_IGN); // its sessions are reaped as they end
    for (;;) {
        const int control = receive_descriptor(sock);
        if (control < 0) _exit(0); // the server went
        const pid_t pid = fork();
        if (pid == 0) {
            close(sock);
            signal(SIGCHLD, SIG_DFL);
            run_session(control, opts, stats);
            _exit(0); // no exit handlers: they belong to the server's image
        }
        if (pid < 0) log_warn("gpu-server: cannot start a session process: %s", std::strerror(errno));
        close(control); // the server sees it hang up if the fork failed
    }
}

} // namespace

std::unique_ptr<SessionSpawner> SessionSpawner::start(const GpuServerOptions& opts, GpuServerStats* stats,
                                                      std::string* why) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        *why = std::string("socketpair: ") + std::strerror(errno);
        return nullptr;
    }
    const pid_t pid = fork();
    if (pid < 0) {
        *why = std::string("cannot fork the session zygote: ") + std::strerror(errno);
        close(pair[0]);
        close(pair[1]);
        return nullptr;
    }
    if (pid == 0) {
        close(pair[0]);
        zygote_loop(pair[1], opts, *stats);
    }
    close(pair[1]);
    return std::unique_ptr<SessionSpawner>(new SessionSpawner(pair[0], pid));
}

SessionSpawner::~SessionSpawner() {
    close(sock_);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
}

std::optional<SessionProcess> SessionSpawner::spawn(std::string* why) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        *why = std::string("socketpair: ") + std::strerror(errno);
        return std::nullopt;
    }
    bool sent;
    {
        std::lock_guard lock(mu_);
        const uint8_t byte = 0;
        const int fds[] = {pair[1]};
        sent = send_with_descriptors(sock_, {&byte, 1}, fds) == 1;
    }
    close(pair[1]);
    SessionHello hello{-1, 0};
    pollfd p{pair[0], POLLIN, 0};
    int ready = 0;
    if (sent) {
        while ((ready = poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kHandshakeTimeout).count()))) < 0 &&
               errno == EINTR) {
        }
    }
    if (!sent || ready <= 0 || read(pair[0], &hello, sizeof hello) != sizeof hello || hello.port == 0) {
        *why = !sent ? "the session zygote is gone" : "a session process did not start listening";
        close(pair[0]);
        return std::nullopt;
    }
    return SessionProcess{hello.pid, static_cast<uint16_t>(hello.port), pair[0]};
}

} // namespace kvmgpu::remote
