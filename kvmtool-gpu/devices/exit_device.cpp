#include "kvmtool-gpu/devices/exit_device.h"

#include <cstring>

namespace kvmgpu {

void ExitDevice::write(uint64_t offset, std::span<const uint8_t> data) {
    // Only an aligned 4-byte write counts; anything else is ignored so a
    // stray byte cannot end the run with a garbage code.
    if (offset != 0 || data.size() != 4) return;
    uint32_t code;
    std::memcpy(&code, data.data(), 4);
    code_.store(code, std::memory_order_relaxed);
    requested_.store(true, std::memory_order_release);
}

} // namespace kvmgpu
