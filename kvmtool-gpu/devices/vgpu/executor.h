// The vGPU's executor thread in the VMM: carries out control requests
// (ENABLE, RESET) and, inline, is the ring's one consumer; with a GPU
// worker it supervises the worker that consumes the ring. What it does is
// the device's (ExecutorWork); this class owns the thread and the eventfd
// that wakes it for a control request or stop().
#pragma once

#include <atomic>
#include <thread>

namespace kvmgpu::vgpu {

// What the executor thread runs; implemented by the device.
class ExecutorWork {
public:
    virtual ~ExecutorWork() = default;
    virtual void on_thread_start() = 0; // first thing on the thread (bind the backend)
    virtual bool run_once() = 0;        // one bounded step; true if it did anything
    // Nothing to do: wait (bounded) for work, or for `wake_fd` (an eventfd
    // the waiter resets), which wake() writes.
    virtual void idle(int wake_fd) = 0;
    virtual void on_thread_stop() = 0;  // last thing on the thread
};

class Executor {
public:
    // Throws std::system_error if the eventfd cannot be created.
    Executor();
    ~Executor();
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;

    // Starts the thread; returns once work.on_thread_start() has finished.
    void start(ExecutorWork& work);
    // Lets the current step finish, runs on_thread_stop(), joins. Idempotent.
    void stop();
    bool running() const { return running_.load(std::memory_order_acquire); }
    bool stopping() const { return stop_.load(std::memory_order_acquire); }

    // Wakes the executor (control requests, stop); any thread, never blocks.
    void wake() noexcept;

private:
    void loop(ExecutorWork* work);

    int wake_fd_ = -1;
    std::atomic<bool> stop_{false};
    std::atomic<bool> running_{false};
    std::thread thread_;
};

} // namespace kvmgpu::vgpu
