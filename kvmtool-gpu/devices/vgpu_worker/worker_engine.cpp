// WorkerEngine: the worker's life (fork, Start, loss, replacement, exit) and
// the one round trip each command makes.
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
#include "kvmtool-gpu/devices/vgpu_worker/shared_pieces.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

namespace {
using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kReapBound{5};     // SIGKILL to gone; a GPU process may take a while to tear down
constexpr std::chrono::seconds kRespawnPause{1};  // between failed attempts to start a worker
constexpr uint64_t kChannelData = 256 << 10;      // Start's piece lists; the backend's description

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
    char buf[64];
    if (WIFSIGNALED(st)) std::snprintf(buf, sizeof buf, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else if (WIFEXITED(st)) std::snprintf(buf, sizeof buf, "exited with status %d", WEXITSTATUS(st));
    else std::snprintf(buf, sizeof buf, "ended (wait status 0x%x)", st);
    return buf;
}
} // namespace


struct WorkerEngine::CountersMapping {
    VgpuCounters* counters = nullptr;
    CountersMapping() {
        void* p = mmap(nullptr, sizeof(VgpuCounters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap(MAP_SHARED) of the vGPU counters");
        counters = new (p) VgpuCounters;
    }
    ~CountersMapping() {
        counters->~VgpuCounters();
        munmap(counters, sizeof(VgpuCounters));
    }
    CountersMapping(const CountersMapping&) = delete;
    CountersMapping& operator=(const CountersMapping&) = delete;
};

std::unique_ptr<WorkerEngine> WorkerEngine::create(const memmap::GuestMemory& mem, BackendFactory make,
                                                   const VgpuOptions& opts, WorkerOptions wopts, std::string* why) {
    std::unique_ptr<WorkerEngine> e(
        new WorkerEngine(mem, std::move(make), opts, wopts, std::make_shared<CountersMapping>()));
    std::string reason;
    if (!e->spawn(&reason)) {
        if (why) *why = reason;
        return nullptr;
    }
    return e;
}

WorkerEngine::WorkerEngine(const memmap::GuestMemory& mem, BackendFactory make, const VgpuOptions& opts,
                           WorkerOptions wopts, std::shared_ptr<CountersMapping> counters)
    : CommandEngine(opts, counters->counters), counters_mapping_(std::move(counters)),
      setup_{&mem, std::move(make), options(), counters_mapping_->counters, 0}, wopts_(wopts),
      first_seed_(next_handle_seed()) {}

WorkerEngine::~WorkerEngine() {
    stop();
    for (pid_t p : unreaped_) reap(p, std::chrono::milliseconds(0));
}

void WorkerEngine::stop() {
    if (pid_ > 0 && !reaped_) {
        // A clean exit lets the worker's backend free what it holds (CUDA
        // context) before the process goes; SIGKILL if it does not answer.
        if (exchange(WorkerOp::Quit, wopts_.quit_timeout) == WorkerChannel::Wait::Done && reap(pid_, wopts_.quit_timeout))
            reaped_ = true;
    }
    retire_worker();
}

std::string WorkerEngine::describe() const {
    std::string d = start_.description;
    d += pid_ > 0 ? "; in GPU worker process " + std::to_string(pid_.load()) : std::string("; no GPU worker process");
    if (replacements_) d += " (" + std::to_string(replacements_.load()) + " replaced after faults)";
    return d;
}

EngineStart WorkerEngine::start() {
    EngineStart s = start_;
    s.description = describe();
    return s;
}

// ---- the worker's life ------------------------------------------------------

bool WorkerEngine::spawn(std::string* why) {
    // What the worker must find at the same addresses: every region's pieces.
    std::vector<uint8_t> pieces;
    for (const memmap::Region& r : setup_.mem->regions()) {
        const auto list = shared_pieces(r.backing->data(), r.size());
        if (!list) return *why = "guest RAM is not MAP_SHARED: a GPU worker process cannot use it in place", false;
        const uint64_t n = list->size();
        const size_t at = pieces.size();
        pieces.resize(at + sizeof n + n * sizeof(SharedPiece));
        std::memcpy(pieces.data() + at, &n, sizeof n);
        std::memcpy(pieces.data() + at + sizeof n, list->data(), n * sizeof(SharedPiece));
    }
    if (pieces.size() > kChannelData) return *why = "guest RAM is in too many pieces for a GPU worker", false;
    try {
        ch_ = WorkerChannel::create(kChannelData, wopts_.spin_us);
    } catch (const std::exception& e) {
        *why = e.what();
        return false;
    }
    // A new generation seed for each worker, so that a replaced worker's
    // handles do not name the new worker's objects.
    setup_.handle_seed = first_seed_ + static_cast<uint32_t>(replacements_.load()) * 0x61C887u;
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        *why = std::string("fork: ") + std::strerror(errno);
        ch_.reset();
        return false;
    }
    if (pid == 0) run_gpu_worker(*ch_, setup_, parent); // the child: never returns
    pid_ = pid;
    reaped_ = false;

    std::memcpy(ch_->data(), pieces.data(), pieces.size());
    ch_->request().in_bytes = pieces.size();
    const auto w = exchange(WorkerOp::Start, wopts_.start_timeout);
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
    if (pid_ > 0 && !reaped_) {
        kill(pid_, SIGKILL);
        if (!reap(pid_, kReapBound)) {
            log_error("vgpu: GPU worker %d has not ended %lld s after SIGKILL; reaping it later", pid_.load(),
                      static_cast<long long>(kReapBound.count()));
            unreaped_.push_back(pid_);
        }
    }
    std::erase_if(unreaped_, [](pid_t p) { return reap(p, Clock::duration::zero()); });
    pid_ = -1;
    ch_.reset(); // a worker that is still dying keeps its own mapping
}

void WorkerEngine::replace_worker(const std::string& why, bool counted) {
    if (!counted) VgpuCounters::add(counters().recoveries);
    log_error("vgpu: GPU worker %d %s: killing it and starting a new one; every VM handle is gone", pid_.load(), why.c_str());
    retire_worker();
    ++replacements_;
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
    case WorkerOp::Execute: return "Execute";
    case WorkerOp::Reset: return "Reset";
    case WorkerOp::Watch: return "Watch";
    case WorkerOp::InjectFault: return "InjectFault";
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

WorkerChannel::Wait WorkerEngine::exchange(WorkerOp op, std::chrono::milliseconds timeout) {
    const bool ends_watch = watching_;
    if (ends_watch) {
        watching_ = false; // the worker stops after the command in hand
        ch_->watch().stop_pass.store(true, std::memory_order_release);
    }
    ch_->request().op = static_cast<uint32_t>(op);
    ch_->post_request();
    ++messages_;
    cancelled_ = false;
    // A cancel ends one wait, like a dead worker: the worker is then replaced.
    const auto w = ch_->wait_reply(Clock::now() + timeout, [this] {
        cancelled_ = cancel_.exchange(false, std::memory_order_acq_rel);
        return !cancelled_ && worker_alive();
    });
    if (ends_watch) handback_ = ch_->watch().consumer.load(std::memory_order_acquire);
    return w;
}

CommandResult WorkerEngine::execute(GuestCommand& cmd) {
    cancel_.store(false, std::memory_order_relaxed); // a cancel is for a call in flight, not a later one
    CommandResult out;
    if (!ensure_worker()) {
        out.status = VGPU_ERROR_NO_DEVICE;
        return out;
    }
    ch_->request().cmd = cmd;
    const auto w = exchange(WorkerOp::Execute, wopts_.call_timeout);
    if (w != WorkerChannel::Wait::Done) {
        out.status = w == WorkerChannel::Wait::TimedOut ? kWorkerTimedOut : kWorkerDied;
        replace_worker(lost_text(w, WorkerOp::Execute));
        VgpuCounters::add(counters().commands);
        VgpuCounters::add(counters().errors);
        return out;
    }
    const WorkerReply& rep = ch_->reply();
    out = rep.result;
    if (out.write_payload) cmd.payload = rep.payload;
    if (rep.flags & kWorkerUnusable) {
        // The worker's engine counted the recovery and dropped the handles;
        // its replacement starts with none.
        replace_worker("cannot recover from " + std::string(status_name(out.status)) + " in place", true);
    }
    return out;
}

void WorkerEngine::reset() {
    cancel_.store(false, std::memory_order_relaxed);
    if (pid_ <= 0) return; // no worker: nothing is held
    const auto w = exchange(WorkerOp::Reset, wopts_.call_timeout);
    if (w != WorkerChannel::Wait::Done) replace_worker(lost_text(w, WorkerOp::Reset));
    else if (ch_->reply().flags & kWorkerUnusable) replace_worker("cannot recover in place during RESET", true);
}

// ---- the watched ring --------------------------------------------------------

bool WorkerEngine::watch(CommandRing& ring) {
    cancel_.store(false, std::memory_order_relaxed);
    handback_.reset();
    if (!ensure_worker()) return false;
    WorkerRequest& q = ch_->request();
    q.ring_gpa = ring.gpa(), q.ring_entries = ring.entries(), q.ring_consumer = ring.consumer();
    const auto w = exchange(WorkerOp::Watch, wopts_.call_timeout);
    if (w != WorkerChannel::Wait::Done) {
        replace_worker(lost_text(w, WorkerOp::Watch));
        return false; // the device runs the ring, through the new worker
    }
    if (ch_->reply().status != VGPU_SUCCESS) return false;
    watching_ = true;
    watch_consumer_ = ring.consumer();
    watch_progress_ = watch_alive_ = Clock::now();
    return true;
}

CommandEngine::Watch WorkerEngine::check_watch(CommandRing& ring) {
    if (!watching_) {
        // A request ended the watch: take over where the worker stopped.
        if (handback_) ring.resume_at(*handback_);
        handback_.reset();
        return Watch::Off;
    }
    const RingWatch& w = ch_->watch();
    const uint32_t state = w.state.load(std::memory_order_acquire);
    const uint32_t consumer = w.consumer.load(std::memory_order_acquire);
    const auto now = Clock::now();
    if (state == RingWatch::Broken) {
        watching_ = false;
        return Watch::Broken;
    }
    if (state == RingWatch::Unusable) {
        // The worker's engine counted the recovery and answered the command.
        watching_ = false;
        ring.resume_at(consumer);
        replace_worker("cannot recover from a sticky error in place", true);
        return watch(ring) ? Watch::Running : Watch::Off;
    }
    if (consumer != watch_consumer_ || !ring.has_work_from(consumer)) {
        watch_consumer_ = consumer;
        watch_progress_ = now; // progress, or nothing to do: the bound restarts
        return Watch::Running;
    }
    // A command waits: is the worker still at it?
    constexpr auto kAliveCheck = std::chrono::milliseconds(10);
    if (now - watch_alive_ >= kAliveCheck) {
        if (!worker_alive()) {
            lose_watch(ring, kWorkerDied, end_text_ + " while watching the ring");
            return watching_ ? Watch::Running : Watch::Off;
        }
        watch_alive_ = now;
    }
    if (now - watch_progress_ >= wopts_.call_timeout) {
        lose_watch(ring, kWorkerTimedOut, "made no progress on a command in time");
        return watching_ ? Watch::Running : Watch::Off;
    }
    return Watch::Running;
}

void WorkerEngine::lose_watch(CommandRing& ring, Status status, const std::string& why) {
    watching_ = false;
    const uint32_t consumer = ch_->watch().consumer.load(std::memory_order_acquire);
    replace_worker(why); // kills it first: nothing writes the ring behind us
    ring.resume_at(consumer);
    CommandResult r;
    r.status = status;
    ring.fail_in_hand(r);
    VgpuCounters::add(counters().commands);
    VgpuCounters::add(counters().errors);
    watch(ring);
}

Status WorkerEngine::inject_fault(WorkerFault f) {
    if (!ensure_worker()) return VGPU_ERROR_NO_DEVICE;
    ch_->request().arg = static_cast<uint32_t>(f);
    const auto w = exchange(WorkerOp::InjectFault, wopts_.call_timeout);
    if (w == WorkerChannel::Wait::Done) return static_cast<Status>(ch_->reply().status);
    replace_worker(lost_text(w, WorkerOp::InjectFault));
    return w == WorkerChannel::Wait::TimedOut ? kWorkerTimedOut : kWorkerDied;
}

} // namespace kvmgpu::vgpu
