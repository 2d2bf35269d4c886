#include "kvmtool-gpu/vmm/vcpu_watchdog.h"

#include <signal.h>

#include <chrono>

namespace kvmgpu {

namespace {
// The signal only has to interrupt KVM_RUN; its handler does nothing.
constexpr int kKickSignal = SIGUSR1;
void install_kick_handler() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction sa {};
        sa.sa_handler = [](int) {};
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0; // no SA_RESTART: KVM_RUN must return EINTR
        sigaction(kKickSignal, &sa, nullptr);
    });
}
} // namespace

VcpuWatchdog::VcpuWatchdog(VcpuFd& vcpu, double timeout_s) : vcpu_(vcpu), target_(pthread_self()) {
    install_kick_handler();
    const bool timed = timeout_s > 0 && timeout_s <= kMaxTimeoutS; // NaN fails both
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timed ? timeout_s : 0.0));
    thread_ = std::thread([this, deadline, timed] {
        std::unique_lock lock(mu_);
        auto over = [this] { return done_ || interrupted(); };
        if (timed) cv_.wait_until(lock, deadline, over);
        else cv_.wait(lock, over); // no time-out: only interrupt() or the run's end
        if (done_) return;
        if (!interrupted()) fired_.store(true, std::memory_order_release);
        // Keep kicking until the run loop notices (the signal may land just
        // before KVM_RUN starts; immediate_exit covers that window).
        while (!done_) {
            vcpu_.request_immediate_exit();
            pthread_kill(target_, kKickSignal);
            cv_.wait_for(lock, std::chrono::milliseconds(20), [this] { return done_; });
        }
    });
}

void VcpuWatchdog::interrupt() {
    {
        std::lock_guard lock(mu_);
        interrupted_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
}

VcpuWatchdog::~VcpuWatchdog() {
    {
        std::lock_guard lock(mu_);
        done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

} // namespace kvmgpu
