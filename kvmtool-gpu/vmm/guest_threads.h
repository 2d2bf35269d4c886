// The threads of a Linux-ABI guest after its first: each clone() gets a
// vCPU of its own (KVM_CREATE_VCPU, reused once its thread has exited) run
// by a host thread of its own, so guest threads run in parallel. A
// supervisor thread, started before the first vCPU is confined by seccomp,
// does what a confined vCPU thread may not: it creates vCPUs and host
// threads, and kicks every vCPU (immediate_exit and SIGUSR1, like the
// watchdog) when the group ends. The first thread stays VirtualMachine's
// run loop; this class serves the others, whose exits end the whole run
// only through end_group().
#pragma once

#include <linux/kvm.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kvmtool-gpu/bus/bus.h"
#include "kvmtool-gpu/kvm/vcpu_fd.h"
#include "kvmtool-gpu/kvm/vm_fd.h"
#include "kvmtool-gpu/vmm/linux/linux_process.h"
#include "kvmtool-gpu/vmm/run_result.h"

namespace kvmgpu {

// How the whole guest ended, as one of its threads saw it.
struct GroupEnd {
    RunOutcome outcome = RunOutcome::GuestExit;
    uint32_t exit_code = 0;
    std::string detail;        // one line
    std::string register_dump; // the thread's vCPU, for faults
};

class GuestThreads {
public:
    struct Env {
        VmFd& vm;
        std::vector<kvm_cpuid_entry2> cpuid;
        linux_abi::LinuxProcess& process;
        const memmap::GuestMemory& memory;
        Bus& mmio;
        Bus& pio;
        bool seccomp = false;     // confine each thread's host thread like the first's
        uint32_t max_threads = 1; // alive at once, the first included
        // After a port write that is not a system call: the run's end if a
        // platform device (exit, fault port) says so.
        std::function<std::optional<GroupEnd>(VcpuFd&)> after_port_write;
        // After an MMIO exit: carries out a CPU-control request this vCPU's
        // exit made, on this vCPU; the run's end if it was refused.
        std::function<std::optional<GroupEnd>(VcpuFd&)> after_mmio;
        // KVM_EXIT_SHUTDOWN: the one line, given the thread's last system call.
        std::function<std::string(VcpuFd&, const std::string&)> describe_shutdown;
    };
    explicit GuestThreads(Env env);
    ~GuestThreads();
    GuestThreads(const GuestThreads&) = delete;
    GuestThreads& operator=(const GuestThreads&) = delete;

    // On the first thread's host thread, before its seccomp filter: starts
    // the supervisor.
    void start(VcpuFd& first);
    // LinuxProcess::Spawn, from any vCPU thread: the tid, or -EAGAIN (the
    // limit, a vCPU or host thread that cannot be made, the VM ending).
    int64_t spawn(const linux_abi::ThreadStart& start, const kvm_regs& regs, const kvm_sregs& sregs);

    // The run ends for every thread (first caller's reason wins): blocked
    // system calls return, every vCPU is kicked out of KVM_RUN.
    void end_group(GroupEnd end);
    std::optional<GroupEnd> group_end() const;
    // The first thread has exited (exit, not exit_group): true once no
    // other thread lives; waits up to `slice` for that or a group end.
    bool others_gone(std::chrono::milliseconds slice);
    // The first thread ended with exit(code); then each other thread that
    // does: the last one's code is the process's, as on Linux.
    void first_exited(uint32_t code);
    uint32_t last_exit_code() const;
    // Stops every thread (end_group if nobody did), joins them and the supervisor.
    void stop_and_join();
    uint32_t threads_started() const;

private:
    struct Slot {
        std::unique_ptr<VcpuFd> vcpu;
        std::thread thread;
        uint32_t tid = 0;
        bool live = false;
    };
    struct Request {
        const linux_abi::ThreadStart* start;
        const kvm_regs* regs;
        const kvm_sregs* sregs;
        int64_t result = -EAGAIN;
        bool done = false;
    };
    void supervise();
    int64_t create(const Request& r); // under mu_, on the supervisor
    void run_thread(Slot& slot);
    // The thread's run loop; its end, if it ends the group.
    std::optional<GroupEnd> loop(Slot& slot, bool& exited, uint32_t& code);
    void kick_all(); // under mu_

    Env env_;
    mutable std::mutex mu_;
    std::condition_variable supervisor_cv_; // requests, the group end, quit
    std::condition_variable change_cv_;     // requests done, threads ended
    std::deque<Request*> requests_;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::optional<GroupEnd> end_;
    std::atomic<bool> stopping_{false}; // written under mu_, read by every vCPU loop at each exit
    bool quit_ = false, limit_logged_ = false;
    uint32_t last_exit_code_ = 0, started_ = 0;
    VcpuFd* first_ = nullptr;
    pthread_t first_thread_{};
    std::thread supervisor_;
};

} // namespace kvmgpu
