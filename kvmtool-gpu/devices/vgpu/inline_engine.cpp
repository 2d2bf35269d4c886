#include "kvmtool-gpu/devices/vgpu/inline_engine.h"

#include <atomic>
#include <stdexcept>

#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

namespace {
DeviceBackends& require(DeviceBackends& b) {
    if (!b) throw std::invalid_argument("InlineEngine: null backend");
    return b;
}
} // namespace

uint32_t next_handle_seed() {
    static std::atomic<uint32_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed) * 0x9E3779u;
}

InlineEngine::InlineEngine(const memmap::GuestMemory& mem, DeviceBackends backends, const VgpuOptions& opts,
                           VgpuCounters* counters, uint32_t handle_seed)
    : CommandEngine(opts, counters), mem_(mem), backends_(std::move(require(backends))),
      dispatch_(mem, backends_, options(), this->counters(), handle_seed) {}

EngineStart InlineEngine::start() {
    backends_.bind_thread();
    EngineStart out;
    for (const memmap::Region& r : mem_.regions()) {
        const Status s = options().lazy_ram_registration ? backends_.add_guest_ram(r.backing->data(), r.size())
                                                         : backends_.register_guest_ram(r.backing->data(), r.size());
        if (out.registration == VGPU_SUCCESS) out.registration = s;
    }
    out.registration_ns = backends_.register_ns();
    out.description = backends_.describe();
    dispatch_.refresh_ram_windows();
    if (!dispatch_.ram_is_remote() && !mem_.regions().empty() && backends_.current().guest_ram_device_address(mem_.regions().front().backing->data()) != 0)
        out.features |= VGPU_FEATURE_ZERO_COPY;
    if (backends_.real_kernels()) out.features |= VGPU_FEATURE_REAL_KERNELS;
    if (out.registration != VGPU_SUCCESS)
        log_warn("vgpu: registering guest RAM with the backend failed (%s): no zero-copy",
                 status_name(out.registration));
    return out;
}

} // namespace kvmgpu::vgpu
