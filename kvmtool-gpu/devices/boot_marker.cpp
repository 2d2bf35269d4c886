#include "kvmtool-gpu/devices/boot_marker.h"

#include <cstring>

namespace kvmgpu {

void BootMarker::write(uint64_t offset, std::span<const uint8_t> data) {
    if (offset != 0 || data.empty()) return;
    uint64_t stage = 0;
    std::memcpy(&stage, data.data(), std::min<size_t>(data.size(), sizeof stage));
    if (stage >= kStages) return;
    const auto now = std::chrono::steady_clock::now();
    const uint64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - t0_).count();
    uint64_t expected = 0;
    stage_ns_[stage].compare_exchange_strong(expected, ns ? ns : 1);
}

} // namespace kvmgpu
