#include "kvmtool-gpu/cli/interrupt_stop.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

namespace kvmgpu::cli {

namespace {
sigset_t stop_signals() {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    return s;
}
} // namespace

StopOnInterrupt::StopOnInterrupt(std::function<void(int)> on_signal) {
    const sigset_t s = stop_signals();
    pthread_sigmask(SIG_BLOCK, &s, &old_mask_);
    waiter_ = std::thread([this, s, on_signal = std::move(on_signal)] {
        bool stopping = false;
        const timespec poll{0, 100 * 1000 * 1000}; // a bound only: the destructor wakes it
        while (!done_.load()) {
            siginfo_t info;
            const int sig = sigtimedwait(&s, &info, &poll);
            if (sig <= 0 || done_.load()) continue; // the destructor's wake-up, or a signal as the VMM ends anyway
            if (stopping) _exit(128 + sig); // the second one: no more waiting
            stopping = true;
            on_signal(sig);
        }
    });
}

StopOnInterrupt::~StopOnInterrupt() {
    done_.store(true);
    // The process's exit would otherwise wait out the poll (0.1 s, seen in
    // every run's wall time).
    pthread_kill(waiter_.native_handle(), SIGTERM);
    waiter_.join();
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

} // namespace kvmgpu::cli
