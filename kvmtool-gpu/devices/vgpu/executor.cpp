#include "kvmtool-gpu/devices/vgpu/executor.h"

#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <system_error>

#include "kvmtool-gpu/devices/vgpu/kick_eventfd.h"

namespace kvmgpu::vgpu {

Executor::Executor() {
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "vgpu: eventfd");
}

Executor::~Executor() {
    stop();
    ::close(wake_fd_);
}

void Executor::start(ExecutorWork& work) {
    if (thread_.joinable()) return;
    stop_.store(false);
    std::mutex mu;
    std::condition_variable cv;
    bool started = false;
    thread_ = std::thread([&, w = &work] {
        pthread_setname_np(pthread_self(), "vgpu-exec");
        w->on_thread_start();
        running_.store(true, std::memory_order_release);
        {
            // Notify under the lock: start() may return (and destroy mu/cv)
            // as soon as it is released.
            std::lock_guard lk(mu);
            started = true;
            cv.notify_one();
        }
        loop(w);
    });
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return started; });
}

void Executor::stop() {
    if (!thread_.joinable()) return;
    stop_.store(true, std::memory_order_release);
    wake();
    thread_.join();
    running_.store(false, std::memory_order_release);
}

void Executor::wake() noexcept { KickEventfd::kick_fd(wake_fd_); }

void Executor::loop(ExecutorWork* work) {
    while (!stop_.load(std::memory_order_acquire)) {
        if (work->run_once()) continue;
        work->idle(wake_fd_); // stop() writes wake_fd_ after stop_: the wait ends
    }
    work->on_thread_stop();
}

} // namespace kvmgpu::vgpu
