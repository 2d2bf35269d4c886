// The worker's side of the channel (Start, Attach, Reset, Quit) and its
// ring loop. What the VMM sends is read with bounds checks against the channel.
#include "kvmtool-gpu/devices/vgpu_worker/gpu_worker.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/alias_budget.h"
#include "kvmtool-gpu/devices/vgpu/inline_engine.h"
#include "kvmtool-gpu/devices/vgpu/ring_waiter.h"
#include "kvmtool-gpu/devices/vgpu_worker/foreign_mappings.h"
#include "kvmtool-gpu/devices/vgpu_worker/syscall_recorder.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_sandbox.h"
#include "kvmtool-gpu/util/spin.h"

namespace kvmgpu::vgpu {

namespace {

class Worker {
public:
    Worker(WorkerChannel& ch, const WorkerSetup& setup, SyscallRecorder* recorder, std::string namespaces)
        : ch_(ch), setup_(setup), recorder_(recorder), namespaces_(std::move(namespaces)) {}
    // Fills ch_.reply() for the request in hand. False after Quit.
    bool serve(const WorkerRequest& q);
    // After an Attach: runs the ring until a request arrives (or the VMM
    // is gone), idling as the doorbell mode says between commands.
    void consume(pid_t parent);
    void set_backend(DeviceBackends be, std::string why) { backend_ = std::move(be), why_ = std::move(why); }

private:
    WorkerReply& r() { return ch_.reply(); }
    void put_text(const std::string& s) {
        r().out_bytes = std::min<uint64_t>(s.size(), ch_.data_bytes());
        std::memcpy(ch_.data(), s.data(), r().out_bytes);
    }
    void start();
    // After a successful start: the sandbox's second step, or the recorder's
    // "after" phase. What it did, for the VMM's log; false if it failed.
    bool confine(std::string* done);
    void attach(const WorkerRequest& q);
    void detach(RingState::State why);
    uint64_t recoveries() const { return setup_.counters->recoveries.load(std::memory_order_relaxed); }
    // After work that made the backend recover: a backend that could not
    // make a new context (CUDA after an illegal address, driver 580) stays
    // unusable in this process, and the VMM replaces the worker.
    bool backend_lost(uint64_t recoveries_before) {
        if (recoveries() == recoveries_before) return false;
        const Status s = engine_->backends().current().ctx_synchronize();
        ch_.ring_state().lost_status.store(s, std::memory_order_relaxed); // published by the Unusable state
        return s != VGPU_SUCCESS;
    }
    void check_usable(uint64_t recoveries_before) {
        if (backend_lost(recoveries_before)) r().flags |= kWorkerUnusable;
    }

    WorkerChannel& ch_;
    const WorkerSetup& setup_;
    DeviceBackends backend_; // until Start hands it to the engine
    std::string why_;                     // why there is no backend
    std::optional<InlineEngine> engine_;
    std::optional<CommandRing> ring_; // while attached
    std::optional<RingWaiter> waiter_;
    SyscallRecorder* recorder_; // nullptr unless recording
    std::string namespaces_;    // the sandbox's first step, as it went
};

void Worker::start() {
    if (engine_) {
        r().status = VGPU_ERROR_INVALID_VALUE; // Start sent twice
        return;
    }
    std::string why = why_;
    if (backend_) {
        try {
            engine_.emplace(*setup_.mem, std::move(backend_), setup_.opts, setup_.counters, setup_.handle_seed);
        } catch (const std::exception& e) {
            why = e.what();
        }
    }
    if (!engine_) {
        r().status = VGPU_ERROR_NO_DEVICE;
        return put_text(why);
    }
    const EngineStart st = engine_->start();
    // Once more with the driver's mappings made: still nothing of another VM.
    if (const auto foreign = foreign_vm_mapping(setup_.own)) {
        r().status = VGPU_ERROR_NO_DEVICE;
        return put_text("the GPU worker maps memory that is not its VM's: " + *foreign);
    }
    std::string sandbox;
    if (!confine(&sandbox)) {
        r().status = VGPU_ERROR_NO_DEVICE; // asked for, and not to be had: no commands run unconfined
        return put_text(sandbox);
    }
    r().backend_id = engine_->backend_id();
    r().registration = st.registration;
    r().registration_ns = st.registration_ns;
    r().features = st.features;
    put_text(st.description + sandbox + "; maps its own VM's memory only");
}

bool Worker::confine(std::string* done) {
    if (recorder_) {
        recorder_->backend_started();
        *done = "; recording its system calls (" + std::string(kWorkerSyscallLogEnv) + "), unconfined" +
                (setup_.opts.worker_sandbox ? ", in " + namespaces_ : "");
        return true;
    }
    if (!setup_.opts.worker_sandbox) return true;
    try {
        *done = "; sandboxed: " + namespaces_ + ", " + confine_worker();
        return true;
    } catch (const std::exception& e) {
        *done = e.what();
        return false;
    }
}

void Worker::attach(const WorkerRequest& q) {
    RingError why;
    ring_ = CommandRing::attach(*setup_.mem, q.ring_gpa, q.ring_entries, setup_.opts.max_ring, &why, q.ring_consumer);
    if (!ring_) {
        r().status = VGPU_ERROR_INVALID_VALUE; // the VMM attached it: not expected
        return;
    }
    waiter_.emplace(setup_.opts, setup_.kick_fd, *setup_.counters);
    RingState& w = ch_.ring_state();
    w.consumer.store(q.ring_consumer, std::memory_order_release);
    w.state.store(RingState::Consuming, std::memory_order_release);
}

void Worker::detach(RingState::State why) {
    ring_.reset();
    waiter_.reset();
    ch_.ring_state().state.store(why, std::memory_order_release);
}

void Worker::consume(pid_t parent) {
    constexpr auto kParentCheck = std::chrono::seconds(1);
    RingState& w = ch_.ring_state();
    uint64_t parent_checked = now_ns();
    while (ring_ && !ch_.request_pending()) {
        const uint64_t recoveries_before = recoveries();
        uint32_t done = 0;
        switch (ring_->run_pass(*engine_, ring_->entries(), w.stop_pass, &done, &w.consumer)) {
        case CommandRing::Pass::Broken: return detach(RingState::Broken);
        case CommandRing::Pass::Progress:
            setup_.counters->count_pass(done);
            if (backend_lost(recoveries_before)) return detach(RingState::Unusable); // the VMM replaces us
            waiter_->worked();
            continue;
        case CommandRing::Pass::Idle: break;
        }
        // A request also writes the kick eventfd, so a sleep ends for it too.
        waiter_->idle(*ring_, -1, kParentCheck, [&] { return ch_.request_pending(); });
        if (now_ns() - parent_checked >= uint64_t{std::chrono::nanoseconds(kParentCheck).count()}) {
            if (getppid() != parent) _exit(0);
            parent_checked = now_ns();
        }
    }
}

bool Worker::serve(const WorkerRequest& q) {
    r() = WorkerReply{};
    const auto op = static_cast<WorkerOp>(q.op);
    if (op != WorkerOp::Start && op != WorkerOp::Quit && !engine_) {
        r().status = VGPU_ERROR_NOT_INITIALIZED;
        return true;
    }
    switch (op) {
    case WorkerOp::Start: start(); break;
    case WorkerOp::Attach: attach(q); break;
    case WorkerOp::Reset: {
        detach(RingState::Off);
        const uint64_t before = recoveries();
        engine_->reset();
        check_usable(before);
        break;
    }
    case WorkerOp::Quit:
        // Nothing is freed one by one: the process's end frees its CUDA
        // context and everything in it at once, as a native program's does
        // (about 90 ms less for the VM's exit on the H100).
        return false;
    default: r().status = VGPU_ERROR_NOT_SUPPORTED; break;
    }
    return true;
}

} // namespace

namespace {
// An MPS client shares memory with its server through the host's /dev/shm:
// one told where the server listens, or one whose server has the default
// pipe directory (a daemon the user started without settings).
bool may_be_mps_client() {
    const char* dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    const std::string control = std::string(dir && *dir ? dir : "/tmp/nvidia-mps") + "/control";
    return (dir && *dir) || access(control.c_str(), F_OK) == 0;
}

// Its memory is all it may hold of any VM: a worker that finds more (a
// mapping its zygote should never have had) does not start.
void check_only_this_vm(const WorkerSetup& setup) {
    if (const auto foreign = foreign_vm_mapping(setup.own)) {
        std::fprintf(stderr, "vgpu-worker: refusing to start: it maps memory that is not its VM's: %s\n", foreign->c_str());
        _exit(1);
    }
}
} // namespace

void run_gpu_worker(WorkerChannel& ch, const WorkerSetup& setup, pid_t parent) {
    check_only_this_vm(setup);
    prctl(PR_SET_NAME, "vgpu-worker");
    AliasBudget::process().serve_one_vm();
    // Both before the backend, while this process is one thread: every
    // thread the driver starts shares the namespaces and the recorder's filter.
    // The MPS client's settings (CUDA_MPS_*), read when CUDA starts.
    for (const auto& [name, value] : setup.env) setenv(name.c_str(), value.c_str(), 1);
    std::string namespaces;
    if (setup.opts.worker_sandbox) namespaces = enter_worker_namespaces(may_be_mps_client());
    SyscallRecorder* recorder = nullptr;
    std::string why;
    if (const char* dir = getenv(kWorkerSyscallLogEnv); dir && *dir) {
        recorder = SyscallRecorder::start(dir, &why);
        if (!recorder) std::fprintf(stderr, "vgpu-worker: %s\n", why.c_str());
        why.clear();
    }
    DeviceBackends be;
    try {
        be = setup.make(&why);
    } catch (const std::exception& e) {
        why = e.what();
    }
    if (!be && why.empty()) why = "the backend factory returned nothing";
    Worker w(ch, setup, recorder, namespaces);
    w.set_backend(std::move(be), why);
    bool running = true;
    while (running && ch.wait_request(parent)) {
        running = w.serve(ch.request());
        ch.ring_state().stop_pass.store(false, std::memory_order_release); // the ring goes on after this request
        ch.post_reply();
        if (running) w.consume(parent);
    }
    _exit(0); // no atexit handlers, no static destructors: they belong to the VMM
}

} // namespace kvmgpu::vgpu
