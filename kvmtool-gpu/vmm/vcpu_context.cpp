#include "kvmtool-gpu/vmm/vcpu_context.h"

#include "kvmtool-gpu/kvm/kvm_error.h"

namespace kvmgpu {

void VcpuContext::end(RunOutcome outcome, std::string detail, uint32_t exit_code) {
    if (end_) return;
    if (!first()) detail += " (thread " + std::to_string(tid_) + ")";
    GroupEnd e{outcome, exit_code, std::move(detail), ""};
    if (outcome != RunOutcome::GuestExit && outcome != RunOutcome::Interrupted) {
        try {
            e.register_dump = vcpu_.dump_state();
        } catch (const KvmError& err) {
            e.register_dump = err.what();
        }
    }
    end_ = std::move(e);
}

std::optional<GroupEnd> VcpuContext::take_end() {
    std::optional<GroupEnd> e = std::move(end_);
    end_.reset();
    return e;
}

} // namespace kvmgpu
