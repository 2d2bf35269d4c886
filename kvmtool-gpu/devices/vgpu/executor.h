// The vGPU's executor thread: the only thread that runs commands and calls
// the backend. It sleeps on an eventfd when idle and wakes on a doorbell:
//   Trap      - the vCPU thread's MMIO write calls kick(): the kick goes into
//               a lock-free queue and the eventfd is written only if the
//               executor is asleep, so the vCPU returns at once;
//   Ioeventfd - KVM itself writes eventfd() on the guest's doorbell write
//               (the VMM registers it with KVM_IOEVENTFD); no exit at all;
//   Poll      - the executor keeps looking at the ring for poll_spin_us after
//               its last command, then sleeps poll_sleep_us between looks
//               (a doorbell, if the guest rings one, still wakes it early).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include <boost/lockfree/queue.hpp>

#include "kvmtool-gpu/devices/vgpu/vgpu_counters.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_options.h"

namespace kvmgpu::vgpu {

// What the executor thread runs; implemented by the device.
class ExecutorWork {
public:
    virtual ~ExecutorWork() = default;
    virtual void on_thread_start() = 0; // first thing on the thread (bind the backend)
    virtual bool run_once() = 0;        // one bounded step; true if it did anything
    virtual bool has_work() const = 0;  // cheap: would run_once() do something now?
    virtual void on_thread_stop() = 0;  // last thing on the thread
};

class Executor {
public:
    // Throws std::system_error if the eventfd cannot be created.
    Executor(const VgpuOptions& opts, VgpuCounters& counters);
    ~Executor();
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;

    // Starts the thread; returns once work.on_thread_start() has finished.
    void start(ExecutorWork& work);
    // Lets the current step finish, runs on_thread_stop(), joins. Idempotent.
    void stop();
    bool running() const { return running_.load(std::memory_order_acquire); }

    // Trap doorbell (vCPU thread): never blocks, never fails.
    void kick(uint32_t value) noexcept;
    // Wakes the executor unconditionally (control requests, stop).
    void wake() noexcept;
    // The eventfd the executor sleeps on; KVM_IOEVENTFD target in Ioeventfd mode.
    int eventfd() const { return efd_; }

private:
    struct Kick {
        uint64_t ns;     // steady-clock time of the doorbell write
        uint32_t value;  // what the guest wrote (informational)
    };
    void loop(ExecutorWork* work);
    void drain_kicks();
    void idle_wait(ExecutorWork* work);

    const DoorbellMode mode_;
    const uint64_t spin_ns_;
    const uint64_t sleep_ns_;
    VgpuCounters& counters_;
    int efd_ = -1;
    // Multi-producer (several vCPUs may ring), single consumer; fixed size so
    // a kick never allocates on the vCPU thread. A full queue only means a
    // kick is already pending.
    boost::lockfree::queue<Kick, boost::lockfree::capacity<256>> kicks_;
    std::atomic<bool> sleeping_{false};
    std::atomic<bool> stop_{false};
    std::atomic<bool> running_{false};
    std::thread thread_;
};

} // namespace kvmgpu::vgpu
