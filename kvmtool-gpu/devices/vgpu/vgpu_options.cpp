#include "kvmtool-gpu/devices/vgpu/vgpu_options.h"

#include <stdexcept>
#include <string>

namespace kvmgpu::vgpu {

const char* to_string(DoorbellMode m) {
    switch (m) {
    case DoorbellMode::Trap: return "trap";
    case DoorbellMode::Ioeventfd: return "ioeventfd";
    case DoorbellMode::Poll: return "poll";
    case DoorbellMode::Adaptive: return "adaptive";
    }
    return "?";
}

bool parse_doorbell(std::string_view s, DoorbellMode* out) {
    for (DoorbellMode m : {DoorbellMode::Adaptive, DoorbellMode::Trap, DoorbellMode::Ioeventfd, DoorbellMode::Poll}) {
        if (s == to_string(m)) {
            *out = m;
            return true;
        }
    }
    return false;
}

void validate(const VgpuOptions& o) {
    auto bad = [](const char* what) { throw std::invalid_argument(std::string("VgpuOptions: ") + what); };
    if (o.doorbell != DoorbellMode::Trap && o.doorbell != DoorbellMode::Ioeventfd && o.doorbell != DoorbellMode::Poll &&
        o.doorbell != DoorbellMode::Adaptive)
        bad("doorbell is not a DoorbellMode");
    if (o.poll_max_us > 1'000'000) bad("poll_max_us must be at most 1 s");
    if (o.max_ring < VGPU_MIN_RING || o.max_ring > kMaxRingLimit || (o.max_ring & (o.max_ring - 1)) != 0)
        bad("max_ring must be a power of two in [VGPU_MIN_RING, 65536]");
    if (o.max_handles == 0 || o.max_handles > (1u << 24)) bad("max_handles must be in [1, 2^24]");
    if (o.max_graph_nodes == 0 || o.max_graph_nodes > (1u << 24)) bad("max_graph_nodes must be in [1, 2^24]");
    if (o.max_module_bytes == 0) bad("max_module_bytes must be > 0");
    if (o.max_registrations == 0) bad("max_registrations must be > 0");
}

} // namespace kvmgpu::vgpu
