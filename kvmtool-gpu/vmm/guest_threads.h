// The threads of a Linux-ABI guest after its first: each clone() gets a
// vCPU of its own (KVM_CREATE_VCPU, reused once its thread has exited) run
// by a host thread of its own, so guest threads run in parallel; each runs
// the VM's one vCPU loop (vcpu_loop.h), and the group's end is the loop's
// (group_exit.h). A supervisor thread, started before the first vCPU is
// confined by seccomp, does what a confined vCPU thread may not: it creates
// vCPUs and host threads, and kicks every vCPU (immediate_exit and SIGUSR1,
// like the watchdog) once the group ends.
#pragma once

#include <linux/kvm.h>
#include <pthread.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "kvmtool-gpu/kvm/vcpu_fd.h"
#include "kvmtool-gpu/kvm/vm_fd.h"
#include "kvmtool-gpu/vmm/linux/linux_process.h"
#include "kvmtool-gpu/vmm/group_exit.h"
#include "kvmtool-gpu/vmm/vcpu_loop.h"

namespace kvmgpu {

class GuestThreads {
public:
    struct Env {
        VmFd& vm;
        std::vector<kvm_cpuid_entry2> cpuid;
        linux_abi::LinuxProcess& process;
        const VcpuLoop& loop;
        GroupExit& group;
        bool seccomp = false;     // confine each thread's host thread like the first's
        uint32_t max_threads = 1; // alive at once, the first included
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

    // The group has ended (GroupExit's on_end): the supervisor starts kicking.
    void wake();
    // Stops every thread (the group's end if nobody reported one), joins
    // them and the supervisor.
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
    void kick_all(); // under mu_

    Env env_;
    mutable std::mutex mu_;
    std::condition_variable supervisor_cv_; // requests, the group end, quit
    std::condition_variable change_cv_;     // requests done
    std::deque<Request*> requests_;
    std::vector<std::unique_ptr<Slot>> slots_;
    bool quit_ = false, limit_logged_ = false;
    uint32_t started_ = 0;
    VcpuFd* first_ = nullptr;
    pthread_t first_thread_{};
    std::thread supervisor_;
};

} // namespace kvmgpu
