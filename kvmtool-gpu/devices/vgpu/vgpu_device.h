// The vGPU as a bus device: its register block (MMIO, KVMGPU_VGPU_GPA), the
// doorbell page, the ring it was enabled with, and the executor thread. With
// an inline engine the executor is the ring's one consumer: it copies each
// command out and hands it to the engine. With a GPU worker the worker
// consumes the ring itself and the executor supervises it. Either way the
// doorbell writes the consumer's kick eventfd. One instance per VM.
//
// Use:
//   auto engine = make_engine(guest_memory, opts, BackendChoice::Auto, GpuWorker::Process, &why);
//   auto vgpu = std::make_shared<VgpuDevice>(guest_memory, std::move(engine));
//   vgpu->start();                         // executor up; it starts the engine (guest RAM registered)
//   bus.claim(KVMGPU_VGPU_GPA, KVMGPU_VGPU_SIZE, vgpu);
//   if uses_ioeventfd(mode): KVM_IOEVENTFD on KVMGPU_VGPU_GPA + VGPU_DOORBELL_OFFSET,
//                 len 4, fd = vgpu->doorbell_eventfd()
//   ... run the VM ...
//   vgpu->stop();                          // or let the destructor do it
// The GuestMemory must outlive the device.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "kvmtool-gpu/bus/bus_device.h"
#include "kvmtool-gpu/devices/vgpu/backends/device_backends.h"
#include "kvmtool-gpu/devices/vgpu/command_engine.h"
#include "kvmtool-gpu/devices/vgpu/command_ring.h"
#include "kvmtool-gpu/devices/vgpu/executor.h"
#include "kvmtool-gpu/devices/vgpu/kick_eventfd.h"
#include "kvmtool-gpu/devices/vgpu/ring_waiter.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_counters.h"
#include "kvmtool-gpu/devices/vgpu/vgpu_options.h"
#include "kvmtool-gpu/util/log.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::vgpu {

class VgpuDevice final : public BusDevice, private ExecutorWork {
public:
    // Throws std::invalid_argument for a null engine, std::system_error if
    // the doorbell eventfd cannot be made. The options are the engine's.
    VgpuDevice(const memmap::GuestMemory& mem, std::unique_ptr<CommandEngine> engine);
    // An InlineEngine over `backends`; also throws for bad options or no backend.
    VgpuDevice(const memmap::GuestMemory& mem, DeviceBackends backends, VgpuOptions opts = {});
    ~VgpuDevice() override;

    // Starts the executor thread, which then starts the engine: the backend
    // is bound to it and guest RAM added (registered as reached, or all of it
    // with VgpuOptions::lazy_ram_registration false).
    // Returns at once: the guest runs meanwhile, and its first access to the
    // registers waits until the engine is up (a GPU worker's CUDA start is
    // hundreds of ms). A registration failure is not fatal: the vGPU runs
    // without zero-copy (see registration_status).
    void start();
    void stop();

    // The ring consumer's kick eventfd; with uses_ioeventfd() the VMM hands
    // it to KVM_IOEVENTFD for the doorbell address. Valid for the device's life.
    int doorbell_eventfd() const { return kick_fd_; }

    std::string_view name() const override { return "vgpu"; }
    void read(uint64_t offset, std::span<uint8_t> data) override;
    void write(uint64_t offset, std::span<const uint8_t> data) override;

    VgpuCounterSnapshot counters() const { return counters_.snapshot(); }
    const VgpuOptions& options() const { return opts_; }
    CommandEngine& engine() { return *engine_; }
    // Once the engine is up (these wait for it): backend description, the
    // RAM registration result and cost, and how long after start() it was up.
    const std::string& backend_description() const { return wait_ready(), backend_desc_; }
    Status registration_status() const { return wait_ready(), reg_status_; }
    uint64_t registration_ns() const { return wait_ready(), reg_ns_; }
    uint64_t ready_after_ns() const { return wait_ready(), ready_after_ns_; }
    // Whether the engine is up (never waits).
    bool ready() const { return ready_.load(std::memory_order_acquire); }
    uint32_t status() const { return status_.load(std::memory_order_acquire); }

private:
    enum class Control { None, Enable, Reset };

    // Register block (vCPU threads).
    void write_control(uint32_t value);
    void enable();
    void set_error(uint32_t status, const char* why);
    bool request(Control c, std::optional<CommandRing> ring);

    // Until the engine is up (or the executor gone).
    void wait_ready() const;

    // ExecutorWork (executor thread).
    void on_thread_start() override;
    void start_engine();
    bool run_once() override;
    void idle(int wake_fd) override;
    void on_thread_stop() override;
    void handle_control();
    void ring_broken();

    const memmap::GuestMemory& mem_;
    // How long RESET waits for the command in hand before cancelling the
    // backend call it is blocked in.
    static constexpr std::chrono::milliseconds kResetGrace{200};
    std::unique_ptr<CommandEngine> engine_;
    const VgpuOptions& opts_;
    VgpuCounters& counters_;
    std::string backend_desc_;
    RateLimiter log_limit_;

    // Written by the guest (under regs_mu_), consumed by ENABLE.
    std::mutex regs_mu_;
    uint64_t staged_ring_gpa_ = 0;
    uint32_t staged_ring_size_ = 0;
    // Read by the guest at any time.
    std::atomic<uint32_t> status_{0};
    std::atomic<uint32_t> error_{VGPU_SUCCESS};
    std::atomic<uint64_t> features_{VGPU_FEATURE_SCATTER_GATHER};
    // Written by the executor before ready_ is set; read after wait_ready().
    Status reg_status_ = VGPU_SUCCESS;
    uint64_t reg_ns_ = 0;
    uint64_t started_at_ns_ = 0;
    uint64_t ready_after_ns_ = 0;
    std::atomic<bool> ready_{false};

    // Control requests: posted by a vCPU, carried out by the executor, which
    // then wakes the vCPU. One at a time (ctrl_serial_).
    std::mutex ctrl_serial_;
    mutable std::mutex ctrl_mu_;                // also guards the wait for ready_
    mutable std::condition_variable ctrl_cv_;
    Control ctrl_ = Control::None;
    std::optional<CommandRing> ctrl_ring_;
    bool ctrl_done_ = false;
    bool executor_gone_ = true; // no thread to carry a request out
    std::atomic<bool> ctrl_pending_{false};
    // Ends a ring pass between two commands: set by a control request and
    // by stop(), so neither waits for the rest of a full ring.
    std::atomic<bool> pass_stop_{false};
    std::atomic<bool> stopping_{false};

    // The ring's kick eventfd: the engine's (a worker's), or ours.
    std::optional<KickEventfd> own_kick_;
    int kick_fd_;
    CommandSink* sink_; // inline: the executor consumes the ring into it; null: the engine does

    // Executor thread only.
    std::optional<CommandRing> ring_;
    std::optional<RingWaiter> waiter_; // inline

    Executor executor_; // last: stopped and destroyed before what it uses
};

} // namespace kvmgpu::vgpu
