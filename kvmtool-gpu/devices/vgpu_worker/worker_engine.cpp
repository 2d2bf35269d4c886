// WorkerEngine: the worker's life (fork, Start, loss, replacement, exit),
// the control requests, and the supervision of the ring the worker consumes.
#include "kvmtool-gpu/devices/vgpu_worker/worker_engine.h"

#include <sys/mman.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <system_error>
#include <thread>

#include "kvmtool-gpu/devices/vgpu/inline_engine.h"
#include "kvmtool-gpu/devices/vgpu_worker/mps_server_group.h"
#include "kvmtool-gpu/devices/vgpu_worker/syscall_recorder.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_zygote.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

namespace {
using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kReapBound{5};     // SIGKILL to gone; a GPU process may take a while to tear down
constexpr std::chrono::seconds kRespawnPause{1};  // between failed attempts to start a worker
constexpr uint64_t kChannelData = 64 << 10;       // the backend's description, or why it did not start

// Waits up to `bound` for `pid` to be reaped; true once it is (or is not our child).
bool reap(pid_t pid, Clock::duration bound) {
    const auto until = Clock::now() + bound;
    for (;;) {
        int st;
        const pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD)) return true;
        if (r < 0 && errno != EINTR) return false;
        if (Clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

std::string exit_text(int st) {
    char buf[192];
    // The sandbox's filter ends the worker with SIGSYS after its report (worker_sandbox.h).
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
        std::snprintf(buf, sizeof buf,
                      "killed by SIGSYS: it made a system call its sandbox denies (its vgpu-worker line names it; "
                      "worker_syscalls.cpp's table; --worker-sandbox off goes without)");
    else if (WIFSIGNALED(st)) std::snprintf(buf, sizeof buf, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else if (WIFEXITED(st)) std::snprintf(buf, sizeof buf, "exited with status %d", WEXITSTATUS(st));
    else std::snprintf(buf, sizeof buf, "ended (wait status 0x%x)", st);
    return buf;
}
} // namespace


struct WorkerEngine::CountersMapping {
    memmap::ForkShare share = memmap::create_unforked_shared("kvmgpu-vgpu-counters", sizeof(VgpuCounters));
    VgpuCounters* counters = new (share.addr) VgpuCounters;
    ~CountersMapping() {
        counters->~VgpuCounters();
        memmap::destroy_unforked_shared(share);
    }
    CountersMapping() = default;
    CountersMapping(const CountersMapping&) = delete;
    CountersMapping& operator=(const CountersMapping&) = delete;
};

std::unique_ptr<WorkerEngine> WorkerEngine::create(const memmap::GuestMemory& mem, BackendFactory make,
                                                   const VgpuOptions& opts, WorkerOptions wopts, std::string* why) {
    std::unique_ptr<WorkerEngine> e(
        new WorkerEngine(mem, std::move(make), opts, wopts, std::make_shared<CountersMapping>()));
    std::string reason;
    if (!e->begin_spawn(&reason) || (!wopts.start_in_background && !e->finish_spawn(&reason))) {
        if (why) *why = reason;
        return nullptr;
    }
    return e;
}

WorkerEngine::WorkerEngine(const memmap::GuestMemory& mem, BackendFactory make, const VgpuOptions& opts,
                           WorkerOptions wopts, std::shared_ptr<CountersMapping> counters)
    : CommandEngine(opts, counters->counters), counters_mapping_(std::move(counters)),
      recipe_{.make = std::move(make),
              .opts = options(),
              .spin_us = wopts.spin_us,
              .mem = &mem,
              .counters = counters_mapping_->share},
      wopts_(wopts), first_seed_(next_handle_seed()) {
    recipe_.kick_fd = kick_.fd();
}

WorkerEngine::~WorkerEngine() {
    stop();
    for (const auto& [p, generation] : unreaped_)
        if (reap(p, std::chrono::milliseconds(0)) && wopts_.mps) wopts_.mps->worker_ended(generation);
}

void WorkerEngine::stop() {
    std::lock_guard lk(mu_);
    ring_ = nullptr, attached_ = false;
    cancel_.store(false, std::memory_order_relaxed); // one meant for a start that finished
    if (pid_ > 0 && !reaped_ && !starting_) { // one still starting is killed: its process's end frees it all
        // A clean exit lets the worker's backend free what it holds (CUDA
        // context) before the process goes; SIGKILL if it does not answer.
        if (exchange(WorkerOp::Quit, wopts_.quit_timeout) == WorkerChannel::Wait::Done && reap(pid_, wopts_.quit_timeout))
            reaped_ = true;
    }
    starting_ = false;
    retire_worker();
}

std::string WorkerEngine::describe() const {
    std::string d = start_.description;
    d += pid_ > 0 ? "; in GPU worker process " + std::to_string(pid_.load()) : std::string("; no GPU worker process");
    if (replacements_) d += " (" + std::to_string(replacements_.load()) + " replaced after faults)";
    return d;
}

void WorkerEngine::settle_start() {
    if (!starting_) return;
    std::string why;
    if (finish_spawn(&why)) return;
    // The first worker could not start its backend: no later one will (no
    // device, no driver); the guest's commands fail. The device logs it.
    start_failed_ = true;
    start_.description = why;
}

EngineStart WorkerEngine::start() {
    {
        std::lock_guard lk(mu_);
        settle_start();
    }
    EngineStart s = start_;
    s.description = describe();
    return s;
}

// ---- the worker's life ------------------------------------------------------

bool WorkerEngine::spawn(std::string* why) { return begin_spawn(why) && finish_spawn(why); }

bool WorkerEngine::begin_spawn(std::string* why) {
    try {
        ch_ = WorkerChannel::create(kChannelData, wopts_.spin_us);
    } catch (const std::exception& e) {
        *why = e.what();
        return false;
    }
    // A new generation seed for each worker, so that a replaced worker's
    // handles do not name the new worker's objects.
    recipe_.handle_seed = first_seed_ + static_cast<uint32_t>(replacements_.load()) * 0x61C887u;
    recipe_.env.clear();
    if (wopts_.mps) {
        generation_ = wopts_.mps->generation();
        recipe_.env = wopts_.mps->client_env();
    }
    // The zygote's environment is the VMM's at its start; the recorder's
    // switch is read as it is now.
    if (const char* dir = getenv(kWorkerSyscallLogEnv)) recipe_.env.emplace_back(kWorkerSyscallLogEnv, dir);
    recipe_.channel = ch_.get();
    const pid_t pid = spawn_gpu_worker(recipe_, why);
    if (pid < 0) {
        ch_.reset();
        return false;
    }
    pid_ = pid;
    reaped_ = false;
    if (wopts_.mps) wopts_.mps->worker_started(generation_);

    ch_->request().in_bytes = 0;
    post(WorkerOp::Start);
    starting_ = true;
    return true;
}

bool WorkerEngine::finish_spawn(std::string* why) {
    starting_ = false;
    const auto w = await_reply(wopts_.start_timeout);
    const WorkerReply& rep = ch_->reply();
    const std::string text(reinterpret_cast<const char*>(ch_->data()), std::min(rep.out_bytes, ch_->data_bytes()));
    if (w != WorkerChannel::Wait::Done || rep.status != VGPU_SUCCESS) {
        *why = w == WorkerChannel::Wait::Done ? text : lost_text(w, WorkerOp::Start);
        retire_worker();
        return false;
    }
    backend_id_ = rep.backend_id;
    start_ = EngineStart{.description = text,
                         .registration = static_cast<Status>(rep.registration),
                         .registration_ns = rep.registration_ns,
                         .features = rep.features};
    return true;
}

bool WorkerEngine::ensure_worker() {
    if (pid_ > 0) return true;
    if (start_failed_) return false;
    if (wopts_.mps && !wopts_.mps->may_start()) return false; // its server still has affected clients
    if (Clock::now() < next_spawn_) return false;
    std::string why;
    if (spawn(&why)) return true;
    next_spawn_ = Clock::now() + kRespawnPause;
    log_error("vgpu: cannot start a GPU worker process: %s", why.c_str());
    return false;
}

bool WorkerEngine::worker_alive() {
    int st = 0;
    pid_t r;
    while ((r = waitpid(pid_, &st, WNOHANG)) < 0 && errno == EINTR) {
    }
    if (r == 0) return true;
    // Reaped here (r == pid_), or not ours to wait for (ECHILD: SIGCHLD
    // ignored). Either way its pid must never be signalled again.
    reaped_ = true;
    end_text_ = r == pid_ ? exit_text(st) : "gone";
    return false;
}

void WorkerEngine::retire_worker() {
    auto ended = [this](uint64_t generation) {
        if (wopts_.mps) wopts_.mps->worker_ended(generation);
    };
    if (pid_ > 0) {
        bool gone = reaped_;
        if (!reaped_) {
            kill(pid_, SIGKILL);
            gone = reap(pid_, kReapBound);
            if (!gone) {
                log_error("vgpu: GPU worker %d has not ended %lld s after SIGKILL; reaping it later", pid_.load(),
                          static_cast<long long>(kReapBound.count()));
                unreaped_.emplace_back(pid_, generation_);
            }
        }
        if (gone) ended(generation_);
    }
    std::erase_if(unreaped_, [&](const std::pair<pid_t, uint64_t>& w) {
        if (!reap(w.first, Clock::duration::zero())) return false;
        ended(w.second);
        return true;
    });
    pid_ = -1;
    ch_.reset(); // a worker that is still dying keeps its own mapping
}

void WorkerEngine::replace_worker(const std::string& why, bool counted) {
    if (!counted) VgpuCounters::add(counters().recoveries);
    log_error("vgpu: GPU worker %d %s: killing it and starting a new one; every VM handle is gone", pid_.load(), why.c_str());
    retire_worker();
    ++replacements_;
    if (wopts_.mps && !wopts_.mps->may_start()) return; // forked once the server takes clients again
    std::string reason;
    if (!spawn(&reason)) {
        next_spawn_ = Clock::now() + kRespawnPause;
        log_error("vgpu: cannot start a new GPU worker: %s", reason.c_str());
    }
}

namespace {
const char* to_string(WorkerOp op) {
    switch (op) {
    case WorkerOp::Start: return "Start";
    case WorkerOp::Attach: return "Attach";
    case WorkerOp::Reset: return "Reset";
    case WorkerOp::Quit: return "Quit";
    }
    return "?";
}
} // namespace

std::string WorkerEngine::lost_text(WorkerChannel::Wait w, WorkerOp op) const {
    const char* name = to_string(op);
    char buf[160];
    if (cancelled_) std::snprintf(buf, sizeof buf, "was cancelled (RESET) during %s", name);
    else if (w == WorkerChannel::Wait::TimedOut) std::snprintf(buf, sizeof buf, "did not answer %s in time", name);
    else std::snprintf(buf, sizeof buf, "%s during %s", end_text_.c_str(), name);
    return buf;
}

// ---- one round trip ---------------------------------------------------------

void WorkerEngine::post(WorkerOp op) {
    ch_->ring_state().stop_pass.store(true, std::memory_order_release); // the worker clears it when it replies
    ch_->request().op = static_cast<uint32_t>(op);
    ch_->post_request();
    kick_.kick(); // a worker asleep on its ring wakes for the request
    ++messages_;
}

WorkerChannel::Wait WorkerEngine::await_reply(std::chrono::milliseconds timeout) {
    cancelled_ = false;
    // A cancel ends one wait, like a dead worker: the worker is then replaced.
    return ch_->wait_reply(Clock::now() + timeout, [this] {
        cancelled_ = cancel_.exchange(false, std::memory_order_acq_rel);
        return !cancelled_ && worker_alive();
    });
}

WorkerChannel::Wait WorkerEngine::exchange(WorkerOp op, std::chrono::milliseconds timeout) {
    post(op);
    return await_reply(timeout);
}

void WorkerEngine::reset() {
    std::lock_guard lk(mu_);
    settle_start();
    cancel_.store(false, std::memory_order_relaxed);
    ring_ = nullptr, attached_ = false; // the device drops its ring after this
    if (pid_ <= 0) return;             // no worker: nothing is held
    const auto w = exchange(WorkerOp::Reset, wopts_.call_timeout);
    if (w != WorkerChannel::Wait::Done) replace_worker(lost_text(w, WorkerOp::Reset));
    else if (ch_->reply().flags & kWorkerUnusable) {
        if (wopts_.mps) wopts_.mps->report_fault(generation_, static_cast<Status>(ch_->ring_state().lost_status.load()));
        replace_worker("cannot recover in place during RESET", true);
    }
}

// ---- the ring the worker consumes ---------------------------------------------

void WorkerEngine::attach_ring(CommandRing& ring) {
    std::lock_guard lk(mu_);
    settle_start();
    cancel_.store(false, std::memory_order_relaxed);
    ring_ = &ring;
    attach_worker();
}

void WorkerEngine::attach_worker() {
    attached_ = false;
    if (!ring_ || !ensure_worker()) return;
    WorkerRequest& q = ch_->request();
    q.ring_gpa = ring_->gpa(), q.ring_entries = ring_->entries(), q.ring_consumer = ring_->consumer();
    const auto w = exchange(WorkerOp::Attach, wopts_.call_timeout);
    if (w != WorkerChannel::Wait::Done) {
        replace_worker(lost_text(w, WorkerOp::Attach)); // supervise() attaches the next one
        return;
    }
    if (ch_->reply().status != VGPU_SUCCESS) return;
    attached_ = true;
    seen_consumer_ = ring_->consumer();
    progress_ = Clock::now();
}

void WorkerEngine::fail_waiting() {
    CommandResult r;
    r.status = VGPU_ERROR_NO_DEVICE;
    for (uint32_t i = 0; i < ring_->entries() && ring_->has_work(); ++i) { // bounded: one ring's worth
        ring_->fail_in_hand(r);
        VgpuCounters::add(counters().commands);
        VgpuCounters::add(counters().errors);
    }
}

bool WorkerEngine::mps_affected() const {
    return wopts_.mps && pid_ > 0 && generation_ < wopts_.mps->generation();
}

CommandEngine::Supervision WorkerEngine::supervise() {
    std::lock_guard lk(mu_);
    if (mps_affected()) {
        // Its server had a fatal fault (this worker's or another VM's): the
        // worker is lost whether it noticed or not.
        const bool counted = attached_ && ch_->ring_state().state.load(std::memory_order_acquire) == RingState::Unusable;
        lose_worker("is a client of an MPS server that had a fatal fault", wopts_.mps->fault_status(), counted);
        return Supervision::Running;
    }
    if (!ring_) return Supervision::Running;
    if (!attached_) {
        // No worker took the ring (none could be started, or its MPS server
        // is recovering): try again, at most once a second; meanwhile no
        // command waits for nothing, beyond the server's recovery.
        attach_worker();
        if (!attached_ && ring_->has_work() && !(wopts_.mps && wopts_.mps->recovering())) fail_waiting();
        return Supervision::Running;
    }
    const RingState& st = ch_->ring_state();
    const uint32_t state = st.state.load(std::memory_order_acquire);
    const uint32_t consumer = st.consumer.load(std::memory_order_acquire);
    if (state == RingState::Broken) {
        ring_ = nullptr, attached_ = false; // the worker let it go; the device reports it
        return Supervision::Broken;
    }
    if (state == RingState::Unusable) {
        // The worker's engine counted the recovery and answered the command.
        // Under MPS the fault is its server's: every client is affected.
        if (wopts_.mps) wopts_.mps->report_fault(generation_, static_cast<Status>(st.lost_status.load(std::memory_order_relaxed)));
        lose_worker("cannot recover from a sticky error in place", kNoFail, true);
        return Supervision::Running;
    }
    const auto now = Clock::now();
    if (consumer != seen_consumer_ || !ring_->has_work_from(consumer)) {
        seen_consumer_ = consumer;
        progress_ = now; // progress, or nothing to do: the bound restarts
        return Supervision::Running;
    }
    // A command waits: is the worker still at it?
    if (!worker_alive()) {
        lose_worker(end_text_ + " while running the ring", kWorkerDied);
    } else if (now - progress_ >= wopts_.call_timeout) {
        lose_worker("made no progress on a command in time", kWorkerTimedOut);
    }
    return Supervision::Running;
}

void WorkerEngine::lose_worker(const std::string& why, Status status, bool counted) {
    const bool had_ring = attached_;
    attached_ = false;
    // Stopped before reading how far it got: a worker lost to another MPS
    // client's fault may still be completing commands.
    if (pid_ > 0 && !reaped_) {
        kill(pid_, SIGKILL);
        reaped_ = reap(pid_, kReapBound);
    }
    const uint32_t consumer = had_ring ? ch_->ring_state().consumer.load(std::memory_order_acquire) : 0;
    // The command in hand now, not one the guest posts while the new
    // worker starts: that one is the new worker's.
    const bool in_hand = ring_ && (had_ring ? ring_->has_work_from(consumer) : ring_->has_work());
    replace_worker(why, counted); // nothing writes the ring behind us
    if (!ring_) return;
    if (had_ring) ring_->resume_at(consumer);
    if (status != kNoFail && in_hand) {
        CommandResult r;
        r.status = status;
        ring_->fail_in_hand(r);
        VgpuCounters::add(counters().commands);
        VgpuCounters::add(counters().errors);
    }
    attach_worker();
}

} // namespace kvmgpu::vgpu
