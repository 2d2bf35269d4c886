// Where one vGPU's commands run: the half of the device model behind the
// ring. Two engines exist: InlineEngine (this process: the device's
// executor consumes the ring and hands it each command as a CommandSink)
// and WorkerEngine (devices/vgpu_worker: the same InlineEngine in a forked
// GPU worker process that consumes the ring in guest RAM itself, as a
// vhost-user backend owns its vring; the device's executor only
// supervises it).
//
// All methods but cancel_call_in_flight(), vm_stopping(), kick() and counters() run on
// the device's executor thread.
#pragma once

#include <chrono>
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

class CommandEngine {
public:
    virtual uint32_t backend_id() const = 0; // VGPU_BACKEND_*
    const VgpuOptions& options() const { return opts_; }
    // The device's counters: the engine's dispatch adds to them, and so do
    // the executor and the doorbell. In shared memory for a worker engine.
    VgpuCounters& counters() { return *counters_; }

    // First, on the executor thread: binds the backend to it and adds guest
    // RAM (registered lazily or all at once: VgpuOptions).
    virtual EngineStart start() = 0;
    // RESET: frees every object the VM holds through the backend and
    // forgets its handles.
    virtual void reset() = 0;
    // Last, on the executor thread (the VM is going away): as reset().
    virtual void stop() { reset(); }
    // Any thread: ends the backend call the executor is blocked in now (a
    // hung worker). Engines that cannot interrupt the driver ignore it.
    virtual void cancel_call_in_flight() {}
    // Any thread: the VM is going away. An engine whose call waits on
    // another host (a server that went silent) stops waiting after a grace;
    // one whose calls end by themselves ignores it.
    virtual void vm_stopping() {}

    // An engine that runs commands in this process: the device's executor
    // consumes the ring and hands them to it. nullptr for an engine that
    // consumes the ring itself (attach_ring()).
    virtual CommandSink* sink() { return nullptr; }
    virtual ~CommandEngine() = default;

    // ---- an engine that consumes the ring itself ------------------------
    // Its kick eventfd (the doorbell's target), or -1 (the device's
    // executor consumes the ring and owns the eventfd).
    virtual int kick_fd() const { return -1; }
    // ENABLE: the engine consumes `ring` from its consumer on, until
    // reset(), stop() or a Broken supervision. The ring stays the device's
    // and outlives that; the engine may complete commands in it (a lost
    // worker's).
    virtual void attach_ring(CommandRing& ring) { (void)ring; }
    // The device's executor looks in, about every kSupervisePeriod: Broken
    // when the guest broke the ring (the engine has let it go).
    enum class Supervision { Running, Broken };
    virtual Supervision supervise() { return Supervision::Running; }
    static constexpr std::chrono::milliseconds kSupervisePeriod{10};

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
