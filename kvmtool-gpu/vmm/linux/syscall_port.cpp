#include "kvmtool-gpu/vmm/linux/syscall_port.h"

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/kvm/kvm_error.h"
#include "kvmtool-gpu/vmm/vcpu_context.h"

namespace kvmgpu::linux_abi {

void SyscallPort::vcpu_write(uint64_t, std::span<const uint8_t>, VcpuContext& ctx) {
    std::optional<SyscallOutcome> call;
    try {
        call = process_.on_port_write(ctx.vcpu(), ctx.tid());
    } catch (const KvmError& e) {
        ctx.end(RunOutcome::Unexpected, e.what());
        return;
    }
    if (!call) {
        ctx.end(RunOutcome::GuestFault, process_.port_refused(ctx.vcpu(), KVMGPU_LINUX_SYSCALL_PORT, false));
        return;
    }
    ctx.last_call = describe_call(*call);
    if (call->exited) {
        ctx.end(RunOutcome::GuestExit, "guest exited with code " + std::to_string(call->exit_code),
                static_cast<uint32_t>(call->exit_code));
    } else if (call->thread_exited) {
        // exit, not exit_group: the process lives while another thread does.
        process_.server().thread_exit(ctx.tid());
        ctx.exited(static_cast<uint32_t>(call->exit_code));
    } else if (!call->stopped.empty()) {
        ctx.end(RunOutcome::GuestFault, call->stopped);
    }
}

} // namespace kvmgpu::linux_abi
