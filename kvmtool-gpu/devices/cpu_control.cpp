#include "kvmtool-gpu/devices/cpu_control.h"

#include <cstring>
#include <utility>

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
    pending_ = r;
}

std::optional<CpuRequest> CpuControl::take() {
    std::lock_guard lock(mu_);
    return std::exchange(pending_, std::nullopt);
}

} // namespace kvmgpu
