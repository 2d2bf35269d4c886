// The CPU the VMM uses beside its vCPU while a guest idles: every thread of
// this process but the vCPU's and the probe's own (the vGPU executor, the
// watchdog, ...) and every child process (the GPU workers), from /proc. The
// vCPU thread may not open files (its seccomp filter), so it only marks the
// window (begin(), end(): a mutex and a condition variable); the probe's
// own thread reads /proc.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace kvmgpu::bench {

class IdleCpuProbe {
public:
    // `vcpu_tid`: the thread whose CPU is the guest's, not the VMM's.
    explicit IdleCpuProbe(pid_t vcpu_tid);
    ~IdleCpuProbe();
    IdleCpuProbe(const IdleCpuProbe&) = delete;
    IdleCpuProbe& operator=(const IdleCpuProbe&) = delete;

    // Any thread. end() returns the CPU used over the window as a fraction
    // of one core, or -1 when no window was begun or /proc could not be read.
    void begin();
    double end();

private:
    enum class Ask { None, Begin, End, Quit };
    void run();
    // CPU time (ns) of the VMM's threads but the excluded ones, and of its
    // children; -1 if /proc cannot be read.
    int64_t cpu_ns() const;

    const pid_t vcpu_tid_;
    pid_t own_tid_ = 0;
    std::mutex mu_;
    std::condition_variable cv_;
    Ask ask_ = Ask::None;
    bool begun_ = false;
    int64_t cpu0_ = -1;
    uint64_t wall0_ = 0;
    double result_ = -1;
    std::thread thread_;
};

} // namespace kvmgpu::bench
