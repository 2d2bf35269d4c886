#include "kvmtool-gpu/vmm/linux/host_stdio.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::linux_abi {

namespace {

const char* const kStdName[3] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};

std::string host_link(int fd, int stream) {
    char target[256];
    const std::string proc = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(proc.c_str(), target, sizeof target - 1);
    if (n <= 0) return kStdName[stream];
    const std::string s(target, static_cast<size_t>(n));
    // A host path outside /dev means nothing in the guest's file system.
    return s.starts_with("pipe:") || s.starts_with("socket:") || s.starts_with("/dev/") ? s : kStdName[stream];
}

} // namespace

void block_sigpipe_on_this_thread() {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
}

std::shared_ptr<const HostStdio> HostStdio::take(int in, int out, int err) {
    std::shared_ptr<HostStdio> s(new HostStdio());
    s->host_ = {in, out, err};
    mode_t in_mode = 0;
    for (int stream = 0; stream < 3; ++stream) {
        const int fd = s->host_[stream];
        struct stat st {};
        if (::fstat(fd, &st) != 0) {
            s->host_[stream] = -1; // closed: reads give end of file, writes EBADF
            s->link_[stream] = kStdName[stream];
            continue;
        }
        if (stream == 0) in_mode = st.st_mode;
        s->link_[stream] = host_link(fd, stream);
        KernelTermios t{};
        if (::ioctl(fd, TCGETS, t.data()) == 0) s->tty_[stream] = t;
        WindowSize w{};
        if (s->tty_[stream] && ::ioctl(fd, TIOCGWINSZ, w.data()) == 0) s->window_[stream] = w;
    }
    if (s->host_[0] < 0) return s;
    if (S_ISREG(in_mode)) {
        s->in_ = UniqueFd(::fcntl(s->host_[0], F_DUPFD_CLOEXEC, 3));
    } else if (S_ISSOCK(in_mode)) {
        log_warn("--stdio raw: stdin is a socket: the guest's stdin reads as end of file");
    } else {
        const std::string proc = "/proc/self/fd/" + std::to_string(s->host_[0]);
        s->in_ = UniqueFd(::open(proc.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        s->stdin_stream_ = static_cast<bool>(s->in_);
        if (!s->in_)
            log_warn("--stdio raw: stdin cannot be reopened (%s): the guest's stdin reads as end of file",
                     std::strerror(errno));
    }
    return s;
}

UniqueFd HostStdio::stdin_descriptor() const {
    return in_ ? UniqueFd(::fcntl(in_.get(), F_DUPFD_CLOEXEC, 3)) : UniqueFd();
}

int64_t HostStdio::write(int stream, std::string_view bytes) const {
    if (stream < 1 || stream > 2 || host_[stream] < 0) return -EBADF;
    block_sigpipe_on_this_thread();
    const int fd = host_[stream];
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n > 0) {
            done += static_cast<size_t>(n);
            continue;
        }
        int e = n < 0 ? errno : EIO;
        if (e == EAGAIN) { // a non-blocking stdout another process gave us: wait until it drains
            pollfd p{fd, POLLOUT, 0};
            if (::ppoll(&p, 1, nullptr, nullptr) >= 0) continue;
            e = errno;
        }
        // EINTR (the VM is being stopped: the guest's loop comes back), EPIPE, ...
        return done ? static_cast<int64_t>(done) : -e;
    }
    return static_cast<int64_t>(done);
}

int HostStdio::stat(int stream, void* st) const {
    if (stream < 0 || stream > 2 || host_[stream] < 0) return -EBADF;
    return ::fstat(host_[stream], static_cast<struct stat*>(st)) == 0 ? 0 : -errno;
}

} // namespace kvmgpu::linux_abi
