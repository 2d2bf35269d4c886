#include "kvmtool-gpu/vmm/fault_port.h"

#include <cstring>

#include "kvmtool-gpu/kvm/kvm_error.h"
#include "kvmtool-gpu/vmm/guest_fault.h"
#include "kvmtool-gpu/vmm/vcpu_context.h"

namespace kvmgpu {

void FaultPort::vcpu_write(uint64_t offset, std::span<const uint8_t> data, VcpuContext& ctx) {
    if (offset != 0 || data.size() != 4) return;
    uint32_t vector = 0;
    std::memcpy(&vector, data.data(), 4);
    if (linux_) {
        try {
            if (linux_->deliver_fault(ctx.vcpu(), vector, ctx.tid())) return;
        } catch (const KvmError& e) {
            ctx.end(RunOutcome::Unexpected, e.what());
            return;
        }
    }
    std::string why = "guest fault, vector " + std::to_string(vector);
    try {
        why = describe_exception(memory_, vector, ctx.vcpu().regs(), ctx.vcpu().sregs());
    } catch (const KvmError&) {
    }
    ctx.end(RunOutcome::GuestFault, std::move(why));
}

} // namespace kvmgpu
