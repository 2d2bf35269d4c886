// Where one vGPU's commands run: the half of the device model behind the
// ring. VgpuDevice copies each command out of guest RAM and hands it to its
// engine; the engine validates it, runs it against a GPU backend and owns
// the VM's handle and allocation tables. Two engines exist: InlineEngine
// (this process) and WorkerEngine (devices/vgpu_worker: the same
// InlineEngine in a forked worker process, one message per command).
//
// All methods but cancel_call_in_flight() and counters() run on the
// device's executor thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kvmtool-gpu/devices/vgpu/command_ring.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_counters.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_options.h"

namespace kvmgpu::vgpu {

// What start() found: for the FEATURES register and the result tables.
struct EngineStart {
    std::string description;            // the backend, and where it runs
    vgpu_status registration = VGPU_SUCCESS; // registering guest RAM with the backend
    uint64_t registration_ns = 0;
    uint64_t features = VGPU_FEATURE_SCATTER_GATHER;
};

class CommandEngine : public CommandSink {
public:
    virtual uint32_t backend_id() const = 0; // VGPU_BACKEND_*
    const VgpuOptions& options() const { return opts_; }
    // The device's counters: the engine's dispatch adds to them, and so do
    // the executor and the doorbell. In shared memory for a worker engine.
    VgpuCounters& counters() { return *counters_; }

    // First, on the executor thread: binds the backend to it and registers
    // all of guest RAM (pinned, device-mapped).
    virtual EngineStart start() = 0;
    // RESET: frees every object the VM holds through the backend and
    // forgets its handles.
    virtual void reset() = 0;
    // Last, on the executor thread (the VM is going away): as reset().
    virtual void stop() { reset(); }
    // Any thread: ends the backend call the executor is blocked in now (a
    // hung worker). Engines that cannot interrupt the driver ignore it.
    virtual void cancel_call_in_flight() {}

    // Polling doorbell: an engine in another process may watch the ring in
    // guest RAM itself, so that a command crosses no process boundary at
    // all. watch() says whether it took the ring; while it has, the device
    // runs no passes and calls check_watch() each time it looks instead.
    // Off: the device runs the ring itself again (from the consumer the
    // engine left in `ring`); Broken: the guest broke the ring.
    enum class Watch { Off, Running, Broken };
    virtual bool watch(CommandRing& ring) {
        (void)ring;
        return false;
    }
    virtual Watch check_watch(CommandRing& ring) {
        (void)ring;
        return Watch::Off;
    }

protected:
    // Throws std::invalid_argument for bad options. `counters`: where to
    // count (memory shared with a worker process), nullptr for counters of
    // the engine's own.
    CommandEngine(const VgpuOptions& opts, VgpuCounters* counters)
        : opts_((validate(opts), opts)),
          own_counters_(counters ? nullptr : std::make_unique<VgpuCounters>()),
          counters_(counters ? counters : own_counters_.get()) {}

private:
    VgpuOptions opts_;
    std::unique_ptr<VgpuCounters> own_counters_;
    VgpuCounters* counters_;
};

} // namespace kvmgpu::vgpu
