#include "kvmtool-gpu/devices/vgpu/vgpu_device.h"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/devices/vgpu/inline_engine.h"
#include "kvmtool-gpu/util/clock.h"

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kRegBytes = VGPU_REG_MAX_RING + 4;

CommandEngine& require(const std::unique_ptr<CommandEngine>& e) {
    if (!e) throw std::invalid_argument("VgpuDevice: null engine");
    return *e;
}
const char* why_ring(RingError e) {
    switch (e) {
    case RingError::Misaligned: return "RING_GPA not 4 KiB aligned";
    case RingError::BadSize: return "RING_SIZE not a power of two in [VGPU_MIN_RING, MAX_RING]";
    case RingError::OutsideRam: return "ring not wholly inside one region of guest RAM";
    case RingError::None: break;
    }
    return "?";
}
} // namespace

VgpuDevice::VgpuDevice(const memmap::GuestMemory& mem, std::unique_ptr<CommandEngine> engine)
    : mem_(mem), engine_(std::move(engine)), opts_(require(engine_).options()), counters_(engine_->counters()),
      log_limit_(opts_.log_per_second), sink_(engine_->sink()) {
    if (engine_->kick_fd() < 0) own_kick_.emplace();
    kick_fd_ = own_kick_ ? own_kick_->fd() : engine_->kick_fd();
    if (sink_) waiter_.emplace(opts_, kick_fd_, counters_);
}

VgpuDevice::VgpuDevice(const memmap::GuestMemory& mem, DeviceBackends backends, VgpuOptions opts)
    : VgpuDevice(mem, std::make_unique<InlineEngine>(mem, std::move(backends), opts)) {}

VgpuDevice::~VgpuDevice() { stop(); }

void VgpuDevice::start() {
    stopping_.store(false), pass_stop_.store(false);
    {
        std::lock_guard lk(ctrl_mu_);
        executor_gone_ = false;
    }
    started_at_ns_ = now_ns();
    ready_.store(false, std::memory_order_release);
    executor_.start(*this);
}

void VgpuDevice::wait_ready() const {
    if (ready_.load(std::memory_order_acquire)) return;
    std::unique_lock lk(ctrl_mu_);
    ctrl_cv_.wait(lk, [&] { return ready_.load(std::memory_order_acquire) || executor_gone_; });
}

void VgpuDevice::stop() {
    // The VM is going away: the command in hand finishes, the rest of the
    // ring is not run (a full ring of slow commands would hold teardown).
    stopping_.store(true, std::memory_order_release);
    pass_stop_.store(true, std::memory_order_release);
    // An engine still starting (a GPU worker initialising CUDA) stops waiting.
    if (!ready_.load(std::memory_order_acquire)) engine_->cancel_call_in_flight();
    engine_->vm_stopping();
    executor_.stop();
}

// ---- register block (vCPU threads) ---------------------------------------

void VgpuDevice::read(uint64_t offset, std::span<uint8_t> data) {
    wait_ready(); // the guest's first touch of the vGPU waits for its engine
    uint8_t regs[kRegBytes] = {};
    auto put32 = [&](uint64_t off, uint32_t v) { std::memcpy(regs + off, &v, 4); };
    auto put64 = [&](uint64_t off, uint64_t v) { std::memcpy(regs + off, &v, 8); };
    put32(VGPU_REG_MAGIC, VGPU_MAGIC);
    put32(VGPU_REG_VERSION, VGPU_ABI_VERSION);
    put64(VGPU_REG_FEATURES, features_.load(std::memory_order_relaxed));
    {
        std::lock_guard lk(regs_mu_);
        put64(VGPU_REG_RING_GPA, staged_ring_gpa_);
        put32(VGPU_REG_RING_SIZE, staged_ring_size_);
    }
    put32(VGPU_REG_STATUS, status_.load(std::memory_order_acquire));
    put32(VGPU_REG_ERROR, error_.load(std::memory_order_acquire));
    put32(VGPU_REG_BACKEND, engine_->backend_id());
    put32(VGPU_REG_DOORBELL_MODE, static_cast<uint32_t>(opts_.doorbell));
    put32(VGPU_REG_MAX_RING, opts_.max_ring);
    // Any width, any alignment: the guest gets the bytes it covered; the
    // rest of `data` stays zero (the bus zero-fills it).
    if (offset >= kRegBytes) return;
    const uint64_t n = std::min<uint64_t>(data.size(), kRegBytes - offset);
    std::memcpy(data.data(), regs + offset, n);
}

void VgpuDevice::write(uint64_t offset, std::span<const uint8_t> data) {
    wait_ready();
    const uint64_t len = data.size();
    if (offset >= VGPU_DOORBELL_OFFSET && offset < KVMGPU_VGPU_SIZE) {
        uint32_t v = 0;
        std::memcpy(&v, data.data(), std::min<uint64_t>(len, sizeof v)); // what the guest wrote: unused
        VgpuCounters::add(counters_.kicks);
        KickEventfd::kick_fd(kick_fd_); // the consumer, wherever it runs
        return;
    }
    // A write must lie wholly inside one writable register.
    auto inside = [&](uint64_t reg, uint64_t size) { return len > 0 && offset >= reg && offset - reg + len <= size; };
    if (inside(VGPU_REG_RING_GPA, 8)) {
        std::lock_guard lk(regs_mu_);
        std::memcpy(reinterpret_cast<uint8_t*>(&staged_ring_gpa_) + (offset - VGPU_REG_RING_GPA), data.data(), len);
    } else if (inside(VGPU_REG_RING_SIZE, 4)) {
        std::lock_guard lk(regs_mu_);
        std::memcpy(reinterpret_cast<uint8_t*>(&staged_ring_size_) + (offset - VGPU_REG_RING_SIZE), data.data(), len);
    } else if (offset == VGPU_REG_CONTROL && len == 4) {
        uint32_t v;
        std::memcpy(&v, data.data(), 4);
        write_control(v);
    } else if (log_limit_.allow()) {
        log_warn("vgpu: ignored %llu-byte write at register offset 0x%llx", static_cast<unsigned long long>(len),
                 static_cast<unsigned long long>(offset));
    }
}

void VgpuDevice::set_error(uint32_t status, const char* why) {
    error_.store(status, std::memory_order_release);
    if (log_limit_.allow()) log_warn("vgpu: %s -> %s", why, status_name(status));
}

void VgpuDevice::write_control(uint32_t value) {
    if (value & ~(VGPU_CONTROL_ENABLE | VGPU_CONTROL_RESET)) return set_error(VGPU_ERROR_INVALID_VALUE, "unknown CONTROL bits");
    if (value & VGPU_CONTROL_RESET) request(Control::Reset, std::nullopt);
    if (value & VGPU_CONTROL_ENABLE) enable();
}

void VgpuDevice::enable() {
    const uint32_t st = status_.load(std::memory_order_acquire);
    if (st & VGPU_STATUS_ENABLED) return set_error(VGPU_ERROR_INVALID_VALUE, "ENABLE while enabled");
    if (st & VGPU_STATUS_BROKEN) return set_error(VGPU_ERROR_INVALID_VALUE, "ENABLE on a broken ring: RESET first");
    uint64_t gpa;
    uint32_t size;
    {
        std::lock_guard lk(regs_mu_);
        gpa = staged_ring_gpa_, size = staged_ring_size_;
    }
    RingError why;
    auto ring = CommandRing::attach(mem_, gpa, size, opts_.max_ring, &why);
    if (!ring) return set_error(VGPU_ERROR_INVALID_VALUE, why_ring(why));
    if (!request(Control::Enable, std::move(ring)))
        set_error(VGPU_ERROR_NOT_INITIALIZED, "ENABLE before start() or after stop()");
}

bool VgpuDevice::request(Control c, std::optional<CommandRing> ring) {
    std::lock_guard serial(ctrl_serial_);
    std::unique_lock lk(ctrl_mu_);
    if (executor_gone_) {
        // No executor: nothing is held, so a reset only clears the registers.
        if (c == Control::Reset) status_.store(0), error_.store(VGPU_SUCCESS);
        return c == Control::Reset;
    }
    ctrl_ = c;
    ctrl_ring_ = std::move(ring);
    ctrl_done_ = false;
    pass_stop_.store(true, std::memory_order_release); // before ctrl_pending_: handle_control() clears both
    ctrl_pending_.store(true, std::memory_order_release);
    executor_.wake();
    // Waits for the executor to finish the command in hand (passes stop
    // between commands once ctrl_pending_ is set). A RESET drops every
    // object anyway, so it does not wait out a call stuck in the backend
    // (a hung worker, up to its 20 s bound): after a short grace it cancels
    // that call, once (the worker is replaced, which RESET implies).
    const auto done = [&] { return ctrl_done_ || executor_gone_; };
    if (c == Control::Reset && !ctrl_cv_.wait_for(lk, kResetGrace, done)) engine_->cancel_call_in_flight();
    ctrl_cv_.wait(lk, done);
    return ctrl_done_;
}

// ---- executor thread -----------------------------------------------------

void VgpuDevice::on_thread_start() {}

void VgpuDevice::start_engine() {
    const EngineStart st = engine_->start();
    reg_status_ = st.registration;
    reg_ns_ = st.registration_ns;
    backend_desc_ = st.description;
    features_.store(st.features, std::memory_order_release);
    ready_after_ns_ = now_ns() - started_at_ns_;
    if (stopping_.load(std::memory_order_acquire)) {
        // The VM ended before the engine was up: nothing to report.
    } else if (engine_->backend_id() == 0) {
        log_error("vgpu: no backend: %s", backend_desc_.c_str());
    } else {
        log_info("vgpu: %s; doorbell %s, ring consumed %s; guest RAM registered in %.1f ms; ready %.1f ms after the "
                 "device started",
                 backend_desc_.c_str(), to_string(opts_.doorbell), sink_ ? "by the VMM's executor" : "by the GPU worker",
                 static_cast<double>(reg_ns_) / 1e6, static_cast<double>(ready_after_ns_) / 1e6);
    }
    std::lock_guard lk(ctrl_mu_);
    ready_.store(true, std::memory_order_release);
    ctrl_cv_.notify_all();
}

void VgpuDevice::handle_control() {
    Control c;
    {
        std::lock_guard lk(ctrl_mu_);
        c = ctrl_;
    }
    // The backend work runs without ctrl_mu_, so the waiting request() can
    // still time its grace and cancel a call stuck in here. ctrl_ and
    // ctrl_ring_ do not change meanwhile: request() holds ctrl_serial_.
    if (c == Control::Reset) engine_->reset();
    std::lock_guard lk(ctrl_mu_);
    if (ctrl_ == Control::Reset) {
        ring_.reset(); // after engine_->reset(): a worker has let it go
        status_.store(0, std::memory_order_release);
        error_.store(VGPU_SUCCESS, std::memory_order_release);
    } else if (ctrl_ == Control::Enable) {
        ring_ = std::move(ctrl_ring_);
        if (!sink_) engine_->attach_ring(*ring_);
        error_.store(VGPU_SUCCESS, std::memory_order_release);
        status_.store(VGPU_STATUS_ENABLED, std::memory_order_release);
    }
    ctrl_ring_.reset();
    ctrl_ = Control::None;
    ctrl_pending_.store(false, std::memory_order_release);
    if (!stopping_.load(std::memory_order_acquire)) pass_stop_.store(false, std::memory_order_release);
    ctrl_done_ = true;
    ctrl_cv_.notify_all();
}

bool VgpuDevice::run_once() {
    if (!ready_.load(std::memory_order_relaxed)) { // the first step: the engine (in the background of the guest)
        start_engine();
        return true;
    }
    if (ctrl_pending_.load(std::memory_order_acquire)) {
        handle_control();
        return true;
    }
    if (!ring_) {
        // A worker may be lost with no ring too: its MPS server's fault.
        engine_->supervise();
        return false;
    }
    if (!sink_) {
        // The worker consumes the ring; this thread only looks in on it.
        if (engine_->supervise() == CommandEngine::Supervision::Broken) {
            ring_broken();
            return true;
        }
        return false;
    }
    uint32_t done = 0;
    switch (ring_->run_pass(*sink_, ring_->entries(), pass_stop_, &done)) {
    case CommandRing::Pass::Idle: return false;
    case CommandRing::Pass::Progress:
        counters_.count_pass(done);
        waiter_->worked();
        return true;
    case CommandRing::Pass::Broken: ring_broken(); return true;
    }
    return false;
}

void VgpuDevice::idle(int wake_fd) {
    // Inline with a ring: the consumer's wait (poll window, event index, kick).
    // Otherwise: a control request, stop(), or (a worker's ring) the next look.
    constexpr std::chrono::seconds kInlineBound{1};
    if (ring_ && sink_) {
        waiter_->idle(*ring_, wake_fd, kInlineBound, [&] { return ctrl_pending_.load(std::memory_order_acquire); });
        return;
    }
    pollfd p{wake_fd, POLLIN, 0};
    const int64_t ns = ring_ ? std::chrono::nanoseconds(CommandEngine::kSupervisePeriod).count()
                             : std::chrono::nanoseconds(kInlineBound).count();
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    if (::ppoll(&p, 1, &ts, nullptr) > 0) KickEventfd::drain(wake_fd);
}

void VgpuDevice::ring_broken() {
    VgpuCounters::add(counters_.broken);
    ring_.reset();
    error_.store(VGPU_ERROR_INVALID_VALUE, std::memory_order_release);
    status_.store(VGPU_STATUS_BROKEN, std::memory_order_release);
    if (log_limit_.allow()) log_warn("vgpu: producer more than RING_SIZE ahead of consumer: ring broken until RESET");
}

void VgpuDevice::on_thread_stop() {
    engine_->stop(); // backend calls stay on this thread
    ring_.reset();
    status_.store(0, std::memory_order_release);
    std::lock_guard lk(ctrl_mu_);
    executor_gone_ = true;
    ctrl_cv_.notify_all();
}

} // namespace kvmgpu::vgpu
