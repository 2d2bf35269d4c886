// The command engine that runs in this process: CommandDispatch over the
// VM's device backends. `--gpu-worker inline` uses it directly; a GPU worker process
// runs one of its own (devices/vgpu_worker).
#pragma once

#include <cstdint>
#include <memory>

#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"
#include "kvmtool-gpu/devices/vgpu/command_engine.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::vgpu {

// A different seed of handle generations for each engine made in this
// process, so two VMs (or a VM before and after its worker was replaced)
// issue different handle numbers.
uint32_t next_handle_seed();

class InlineEngine final : public CommandEngine, public CommandSink {
public:
    // Throws std::invalid_argument for no backend or bad options. The
    // GuestMemory must outlive the engine.
    InlineEngine(const memmap::GuestMemory& mem, DeviceBackends backends, const VgpuOptions& opts,
                 VgpuCounters* counters = nullptr, uint32_t handle_seed = next_handle_seed());

    uint32_t backend_id() const override { return backends_.id(); }
    EngineStart start() override;
    CommandResult execute(GuestCommand& cmd) override { return dispatch_.execute(cmd); }
    CommandSink* sink() override { return this; }
    void reset() override { dispatch_.reset(); }

    DeviceBackends& backends() { return backends_; }
    // `mem` is a GPU server's copy of a remote VM's RAM (guest_ram_remote.h):
    // before start(); no zero-copy is offered then.
    void use_remote_ram(GuestRamRemote* remote) { dispatch_.use_remote_ram(remote); }

private:
    const memmap::GuestMemory& mem_;
    DeviceBackends backends_;
    CommandDispatch dispatch_;
};

} // namespace kvmgpu::vgpu
