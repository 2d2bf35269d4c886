#include "kvmtool-gpu/devices/cpu_control.h"

#include <cstring>

#include "kvmtool-gpu/abi/platform_abi.h"

namespace kvmgpu {

void CpuControl::write(uint64_t offset, std::span<const uint8_t> data) {
    if (data.size() != 8) return;
    uint64_t value;
    std::memcpy(&value, data.data(), 8);
    CpuRequest r;
    if (offset == KVMGPU_CPU_CONTROL_REG_LOAD_CR3) r = {CpuRequest::Kind::LoadCr3, value};
    else if (offset == KVMGPU_CPU_CONTROL_REG_CALIBRATE)
        r = {value ? CpuRequest::Kind::CalibrateBegin : CpuRequest::Kind::CalibrateEnd, value};
    else return;
    std::lock_guard lock(mu_);
    pending_.insert_or_assign(std::this_thread::get_id(), r);
}

std::optional<CpuRequest> CpuControl::take() {
    std::lock_guard lock(mu_);
    const auto it = pending_.find(std::this_thread::get_id());
    if (it == pending_.end()) return std::nullopt;
    const CpuRequest r = it->second;
    pending_.erase(it);
    return r;
}

} // namespace kvmgpu
