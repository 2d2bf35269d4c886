// One vCPU as the host thread that runs it sees it: its fd, the guest
// thread it runs, the counts of its exits, and how an exit's handler ends
// the run (the whole guest: end()) or only this thread (exited()). The vCPU
// loop (vcpu_loop.h) passes it with every access to the devices that act
// on the vCPU itself (bus_device.h's vcpu_write), as kvmtool passes its
// kvm_cpu to its port handlers.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "kvmtool-gpu/kvm/vcpu_fd.h"
#include "kvmtool-gpu/vmm/run_result.h"

namespace kvmgpu {

// How the whole guest ended, as one of its threads saw it.
struct GroupEnd {
    RunOutcome outcome = RunOutcome::GuestExit;
    uint32_t exit_code = 0;
    std::string detail;        // one line
    std::string register_dump; // the vCPU that saw it, for every end but an exit or a stop request
};

class VcpuContext {
public:
    // The first vCPU runs guest thread 1 (a project image's only thread).
    VcpuContext(VcpuFd& vcpu, uint32_t tid) : vcpu_(vcpu), tid_(tid) {}

    VcpuFd& vcpu() { return vcpu_; }
    uint32_t tid() const { return tid_; }
    bool first() const { return tid_ == 1; }

    // The guest ends with `outcome` (first call wins): `detail` gets the
    // thread's number after the first's, and the end this vCPU's registers
    // unless it is an exit or a stop request.
    void end(RunOutcome outcome, std::string detail, uint32_t exit_code = 0);
    // This thread alone ended, with exit(code) (not exit_group).
    void exited(uint32_t code) {
        exit_code_ = code;
        exited_at_ = std::chrono::steady_clock::now();
    }
    bool done() const { return end_.has_value() || exit_code_.has_value(); }
    // The end a handler reported, once.
    std::optional<GroupEnd> take_end();
    const std::optional<uint32_t>& exit_code() const { return exit_code_; }
    // When exited() was called: which of several threads' exits came last.
    std::chrono::steady_clock::time_point exited_at() const { return exited_at_; }

    ExitCounts exits;
    // A Linux-ABI guest's last system call on this thread, for a triple fault's report.
    std::string last_call;

private:
    VcpuFd& vcpu_;
    uint32_t tid_;
    std::optional<GroupEnd> end_;
    std::optional<uint32_t> exit_code_;
    std::chrono::steady_clock::time_point exited_at_{};
};

} // namespace kvmgpu
