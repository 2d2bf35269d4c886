#include "kvmtool-gpu/devices/vgpu/executor.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include "kvmtool-gpu/util/spin.h"

#include <condition_variable>
#include <mutex>
#include <system_error>

namespace kvmgpu::vgpu {


Executor::Executor(const VgpuOptions& opts, VgpuCounters& counters)
    : mode_(opts.doorbell), spin_ns_(uint64_t{opts.poll_spin_us} * 1000), sleep_ns_(uint64_t{opts.poll_sleep_us} * 1000),
      counters_(counters) {
    efd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd_ < 0) throw std::system_error(errno, std::generic_category(), "vgpu: eventfd");
}

Executor::~Executor() {
    stop();
    ::close(efd_);
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

void Executor::kick(uint32_t value) noexcept {
    VgpuCounters::add(counters_.kicks);
    if (!kicks_.push(Kick{now_ns(), value})) VgpuCounters::add(counters_.kicks_dropped);
    // Pairs with the fence in idle_wait(): either the executor sees the kick
    // before it sleeps, or we see it sleeping and write the eventfd.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_relaxed)) wake();
}

void Executor::wake() noexcept {
    const uint64_t one = 1;
    // EAGAIN means the counter is saturated: a wake-up is pending anyway.
    [[maybe_unused]] ssize_t n = ::write(efd_, &one, sizeof one);
}

void Executor::drain_kicks() {
    Kick k;
    uint64_t now = 0;
    while (kicks_.pop(k)) {
        if (now == 0) now = now_ns();
        VgpuCounters::add(counters_.kick_wait_ns, now > k.ns ? now - k.ns : 0);
    }
}

void Executor::idle_wait(ExecutorWork* work) {
    sleeping_.store(true, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (stop_.load(std::memory_order_acquire) || !kicks_.empty() || work->has_work()) {
        sleeping_.store(false, std::memory_order_relaxed);
        return;
    }
    pollfd p{efd_, POLLIN, 0};
    timespec ts{static_cast<time_t>(sleep_ns_ / 1000000000ull), static_cast<long>(sleep_ns_ % 1000000000ull)};
    // Poll mode wakes by itself to look at the ring; the others wait for the eventfd.
    const int n = ::ppoll(&p, 1, mode_ == DoorbellMode::Poll ? &ts : nullptr, nullptr);
    if (n > 0) {
        uint64_t v;
        [[maybe_unused]] ssize_t r = ::read(efd_, &v, sizeof v); // reset the counter
    }
    sleeping_.store(false, std::memory_order_relaxed);
    VgpuCounters::add(counters_.wakeups);
}

void Executor::loop(ExecutorWork* work) {
    uint64_t last_progress = now_ns();
    while (!stop_.load(std::memory_order_acquire)) {
        drain_kicks();
        if (work->run_once()) {
            if (mode_ == DoorbellMode::Poll) last_progress = now_ns();
            continue;
        }
        if (mode_ == DoorbellMode::Poll && now_ns() - last_progress < spin_ns_) {
            cpu_relax(); // bounded: the spin window ends spin_ns_ after the last command
            continue;
        }
        idle_wait(work);
    }
    work->on_thread_stop();
}

} // namespace kvmgpu::vgpu
