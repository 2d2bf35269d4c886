#include "kvmtool-gpu/bench/native_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

namespace kvmgpu::bench {

namespace {

void write_all(int fd, const std::string& s) {
    for (size_t off = 0; off < s.size();) {
        const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        off += static_cast<size_t>(n);
    }
}

int ms_until(NativeChild::Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - NativeChild::Clock::now());
    return left.count() <= 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1000));
}

} // namespace

NativeChild::NativeChild(std::string what, const std::function<std::string()>& body) : what_(std::move(what)) {
    int fds[2];
    // O_CLOEXEC: a program the child starts (bench libraries' native twin)
    // must not hold the write end open after the child is gone.
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        fork_error_ = std::string("pipe: ") + std::strerror(errno);
        return;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    pid_ = ::fork();
    if (pid_ < 0) {
        fork_error_ = std::string("fork: ") + std::strerror(errno);
        ::close(fds[0]), ::close(fds[1]);
        return;
    }
    if (pid_ == 0) {
        ::close(fds[0]);
        int status = 0;
        try {
            write_all(fds[1], body());
        } catch (const std::exception& e) { // never unwind into the parent's code, which this copy holds
            std::fprintf(stderr, "bench: %s: %s\n", what_.c_str(), e.what());
            status = 1;
        } catch (...) {
            status = 1;
        }
        std::fflush(stdout);
        std::fflush(stderr);
        ::_exit(status); // not exit(): the parent's atexit handlers and statics are the parent's
    }
    ::close(fds[1]);
    fd_ = fds[0];
}

NativeChild::~NativeChild() {
    if (pid_ > 0) kill_and_reap();
    if (fd_ >= 0) ::close(fd_);
}

void NativeChild::kill_and_reap() {
    ::kill(pid_, SIGKILL);
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {}
    pid_ = -1;
}

std::optional<std::string> NativeChild::collect(Clock::time_point deadline, std::string* why) {
    if (pid_ <= 0) {
        *why = fork_error_.empty() ? what_ + " was collected already" : fork_error_;
        return std::nullopt;
    }
    std::string bytes;
    bool timed_out = false;
    for (char buf[4096];;) { // until EOF: the child ended or closed the pipe
        pollfd p{fd_, POLLIN, 0};
        const int ready = ::poll(&p, 1, ms_until(deadline));
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) break; // not with our own pipe; the wait below still decides
        if (ready == 0) {
            if (Clock::now() < deadline) continue;
            timed_out = true;
            break;
        }
        const ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        bytes.append(buf, static_cast<size_t>(n));
    }
    int st = 0;
    pid_t done = 0;
    while (!timed_out && (done = ::waitpid(pid_, &st, WNOHANG)) == 0) {
        if (Clock::now() >= deadline) timed_out = true;
        else std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (timed_out) {
        const pid_t pid = pid_;
        kill_and_reap();
        *why = what_ + " ran past its deadline and was killed";
        std::printf("bench: %s (pid %d) ran past its deadline and was killed\n", what_.c_str(), static_cast<int>(pid));
        std::fflush(stdout);
        return std::nullopt;
    }
    pid_ = -1;
    if (done < 0) {
        *why = what_ + ": waitpid: " + std::strerror(errno);
        return std::nullopt;
    }
    if (WIFSIGNALED(st)) {
        *why = what_ + " died of signal " + std::to_string(WTERMSIG(st));
        return std::nullopt;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        *why = what_ + " exited with status " + std::to_string(WEXITSTATUS(st));
        return std::nullopt;
    }
    return bytes;
}

} // namespace kvmgpu::bench
