// Ends a KVM_RUN that outlives its time-out, or that another thread asks to
// end (interrupt(): Ctrl-C): sets immediate_exit and sends the vCPU thread a
// signal so the ioctl returns EINTR. Scoped to one run.
#pragma once

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "kvmtool-gpu/kvm/vcpu_fd.h"

namespace kvmgpu {

class VcpuWatchdog {
public:
    // Longest time-out honoured (about 31 years); anything longer, like 0,
    // a negative value or NaN, means none. Beyond ~9.2e9 s a steady_clock
    // deadline would overflow.
    static constexpr double kMaxTimeoutS = 1e9;
    VcpuWatchdog(VcpuFd& vcpu, double timeout_s);
    ~VcpuWatchdog();
    bool fired() const { return fired_.load(std::memory_order_acquire); }
    // Ends the run as soon as possible; any thread may call it.
    void interrupt();
    bool interrupted() const { return interrupted_.load(std::memory_order_acquire); }
    // Either: the run must end now.
    bool ended() const { return fired() || interrupted(); }

private:
    VcpuFd& vcpu_;
    pthread_t target_;
    std::atomic<bool> fired_{false};
    std::atomic<bool> interrupted_{false};
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

} // namespace kvmgpu
