// Ctrl-C (SIGINT) and SIGTERM, turned into a clean stop: while one of these
// lives, the two signals are blocked in every thread this process starts
// afterwards (vCPU threads, and GPU worker processes, which the terminal's
// Ctrl-C would otherwise kill behind the VMM's back) and a thread of its own
// takes them and calls on_signal once. A second signal ends the process at
// once, as Ctrl-C usually does.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace kvmgpu::cli {

class StopOnInterrupt {
public:
    explicit StopOnInterrupt(std::function<void(int signal)> on_signal);
    ~StopOnInterrupt();
    StopOnInterrupt(const StopOnInterrupt&) = delete;
    StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;

private:
    sigset_t old_mask_;
    std::atomic<bool> done_{false};
    std::thread waiter_;
};

} // namespace kvmgpu::cli
