// RemoteBackend: the worker's life (fork, handshake, guest RAM registration,
// loss, replacement, exit) and the round trip every call makes. The
// GpuBackend methods themselves are in remote_backend_ops.cpp.
#include "kvmtool-gpu/devices/vgpu/backends/remote_backend.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::vgpu {

namespace {
using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kReapBound{5};     // SIGKILL to gone; a GPU process may take a while to tear down
constexpr std::chrono::seconds kRespawnPause{1};  // between failed attempts to start a worker

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

std::unique_ptr<RemoteBackend> RemoteBackend::create(BackendFactory make, RemoteBackendOptions opts, std::string* why) {
    std::unique_ptr<RemoteBackend> b(new RemoteBackend(std::move(make), opts));
    std::string reason;
    if (!b->spawn(&reason)) {
        if (why) *why = reason;
        return nullptr;
    }
    return b;
}

RemoteBackend::~RemoteBackend() {
    if (pid_ > 0 && !reaped_) {
        // A clean exit lets the worker's backend free what it holds (CUDA
        // context) before the process goes; SIGKILL if it does not answer.
        if (exchange(RpcOp::Quit, {}, 0, 0, opts_.quit_timeout) == RpcChannel::Wait::Done && reap(pid_, opts_.quit_timeout))
            reaped_ = true;
    }
    retire_worker();
    for (pid_t p : unreaped_) reap(p, std::chrono::milliseconds(0));
}

std::string RemoteBackend::describe() const {
    std::string d = describe_;
    d += pid_ > 0 ? "; in GPU worker process " + std::to_string(pid_) : std::string("; no GPU worker process");
    if (replacements_) d += " (" + std::to_string(replacements_) + " replaced after faults)";
    return d;
}

// ---- the worker's life ------------------------------------------------------

bool RemoteBackend::spawn(std::string* why) {
    try {
        ch_ = RpcChannel::create(opts_.data_bytes, opts_.spin_us);
    } catch (const std::exception& e) {
        *why = e.what();
        return false;
    }
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        *why = std::string("fork: ") + std::strerror(errno);
        ch_.reset();
        return false;
    }
    if (pid == 0) run_gpu_worker(*ch_, make_, parent); // the child: never returns
    pid_ = pid;
    reaped_ = false;
    pristine_ = true;

    const auto w = exchange(RpcOp::Info, {}, 0, 0, opts_.start_timeout);
    if (w != RpcChannel::Wait::Done || ch_->reply().status != VGPU_SUCCESS) {
        *why = w == RpcChannel::Wait::Done ? std::string(reinterpret_cast<const char*>(ch_->data()), ch_->reply().out_bytes)
                                           : lost_text(w, RpcOp::Info);
        retire_worker();
        return false;
    }
    apply_info(ch_->reply());
    // Guest RAM registered with the worker before this one.
    for (SharedRam& r : ram_) {
        if (const auto lost = register_in_worker(r); lost != RpcChannel::Wait::Done) {
            *why = lost_text(lost, RpcOp::RegisterGuestRam);
            retire_worker();
            return false;
        }
    }
    rebuild_windows();
    return true;
}

bool RemoteBackend::ensure_worker() {
    if (pid_ > 0) return true;
    if (Clock::now() < next_spawn_) return false;
    std::string why;
    if (spawn(&why)) return true;
    next_spawn_ = Clock::now() + kRespawnPause;
    log_error("vgpu: cannot start a GPU worker process: %s", why.c_str());
    return false;
}

bool RemoteBackend::worker_alive() {
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

void RemoteBackend::retire_worker() {
    if (pid_ > 0 && !reaped_) {
        kill(pid_, SIGKILL);
        if (!reap(pid_, kReapBound)) {
            log_error("vgpu: GPU worker %d has not ended %lld s after SIGKILL; reaping it later", pid_,
                      static_cast<long long>(kReapBound.count()));
            unreaped_.push_back(pid_);
        }
    }
    std::erase_if(unreaped_, [](pid_t p) { return reap(p, Clock::duration::zero()); });
    pid_ = -1;
    ch_.reset(); // a worker that is still dying keeps its own mapping
    for (SharedRam& r : ram_) r.seen = false, r.dev = 0;
    windows_.clear();
}

void RemoteBackend::replace_worker(const std::string& why) {
    log_error("vgpu: GPU worker %d %s: killing it and starting a new one; the VM's GPU objects are gone", pid_,
              why.c_str());
    retire_worker();
    replaced_ = true;
    ++replacements_;
    std::string reason;
    if (!spawn(&reason)) {
        next_spawn_ = Clock::now() + kRespawnPause;
        log_error("vgpu: cannot start a new GPU worker: %s", reason.c_str());
    }
}

std::string RemoteBackend::lost_text(RpcChannel::Wait w, RpcOp op) const {
    char buf[160];
    if (w == RpcChannel::Wait::TimedOut)
        std::snprintf(buf, sizeof buf, "did not answer request %u in time", static_cast<unsigned>(op));
    else
        std::snprintf(buf, sizeof buf, "%s during request %u", end_text_.c_str(), static_cast<unsigned>(op));
    return buf;
}

void RemoteBackend::apply_info(const RpcReply& r) {
    id_ = static_cast<uint32_t>(r.out[0]);
    real_kernels_ = r.out[1] != 0;
    default_sg_ = static_cast<SgStrategy>(std::min<uint64_t>(r.out[2], static_cast<uint64_t>(SgStrategy::DeviceWalk)));
    register_ns_ = r.out[3];
    describe_.assign(reinterpret_cast<const char*>(ch_->data()), std::min(r.out_bytes, ch_->data_bytes()));
}

void RemoteBackend::rebuild_windows() {
    windows_.clear();
    for (const SharedRam& r : ram_)
        if (r.seen && r.dev) windows_.add(r.host, r.bytes, r.dev);
}

// ---- guest RAM ------------------------------------------------------------

RpcChannel::Wait RemoteBackend::register_in_worker(SharedRam& r) {
    r.seen = false, r.dev = 0;
    const uint64_t in = r.pieces.size() * sizeof(SharedPiece);
    if (in > ch_->data_bytes()) {
        r.status = VGPU_ERROR_INVALID_VALUE; // a RAM slice in ~2.7 million pieces: not ours
        return RpcChannel::Wait::Done;
    }
    std::memcpy(ch_->data(), r.pieces.data(), in);
    const auto w = exchange(RpcOp::RegisterGuestRam, {reinterpret_cast<uint64_t>(r.host), r.bytes, r.pieces.size()},
                            in, 0, opts_.register_timeout);
    if (w != RpcChannel::Wait::Done) return w;
    const RpcReply& rep = ch_->reply();
    r.status = static_cast<Status>(rep.status);
    r.seen = rep.out[0] == 1;
    r.dev = rep.out[1];
    return w;
}

Status RemoteBackend::register_guest_ram(void* host, uint64_t bytes) {
    auto* h = static_cast<uint8_t*>(host);
    auto pieces = shared_pieces(host, bytes);
    if (!pieces) {
        log_warn("vgpu: %llu bytes of guest RAM at %p are not MAP_SHARED: the GPU worker cannot use them in place",
                 static_cast<unsigned long long>(bytes), host);
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    // Remembered first: every later worker registers it as it starts.
    auto it = std::find_if(ram_.begin(), ram_.end(), [&](const SharedRam& r) { return r.host == h && r.bytes == bytes; });
    if (it == ram_.end()) it = ram_.insert(ram_.end(), SharedRam{h, bytes, {}});
    it->pieces = std::move(*pieces);
    const size_t index = static_cast<size_t>(it - ram_.begin());
    if (pid_ <= 0) {
        if (!ensure_worker()) return VGPU_ERROR_NO_DEVICE; // a new worker registered it
    } else if (const auto w = register_in_worker(ram_[index]); w != RpcChannel::Wait::Done) {
        replace_worker(lost_text(w, RpcOp::RegisterGuestRam)); // the new worker registered it
    }
    if (!ram_[index].seen && pid_ > 0 && pristine_) {
        // The worker was forked before this RAM was mapped; a new one sees it,
        // and nothing is lost by replacing a worker that holds no object yet.
        retire_worker();
        if (!ensure_worker()) return VGPU_ERROR_NO_DEVICE;
    }
    const SharedRam& r = ram_[index];
    if (!r.seen) {
        if (pid_ <= 0) return VGPU_ERROR_NO_DEVICE;
        log_warn("vgpu: the GPU worker does not share guest RAM at %p (forked before it was mapped)", host);
        return VGPU_ERROR_NOT_SUPPORTED;
    }
    refresh_info();
    rebuild_windows();
    return r.status;
}

bool RemoteBackend::shared(const void* host, uint64_t bytes) const {
    const auto* p = static_cast<const uint8_t*>(host);
    for (const SharedRam& r : ram_)
        if (r.seen && p >= r.host && static_cast<uint64_t>(p - r.host) <= r.bytes && bytes <= r.bytes - (p - r.host))
            return true;
    return false;
}

void RemoteBackend::refresh_info() {
    const Reply r = call(RpcOp::Info, {});
    if (r.answered && r.r.status == VGPU_SUCCESS) apply_info(r.r);
}

// ---- one round trip ---------------------------------------------------------

RpcChannel::Wait RemoteBackend::exchange(RpcOp op, std::initializer_list<uint64_t> args, uint64_t in_bytes,
                                         uint32_t flags, std::chrono::milliseconds timeout) {
    RpcRequest& q = ch_->request();
    q = RpcRequest{.op = static_cast<uint32_t>(op), .flags = flags, .arg = {}, .in_bytes = in_bytes};
    std::copy_n(args.begin(), std::min<size_t>(args.size(), std::size(q.arg)), q.arg);
    ch_->post_request();
    // A cancel ends one wait, like a dead worker: the worker is then replaced.
    return ch_->wait_reply(Clock::now() + timeout,
                           [this] { return !cancel_.exchange(false, std::memory_order_acq_rel) && worker_alive(); });
}

RemoteBackend::Reply RemoteBackend::call(RpcOp op, std::initializer_list<uint64_t> args, uint64_t in_bytes,
                                         uint32_t flags, std::chrono::milliseconds timeout) {
    Reply out;
    cancel_.store(false, std::memory_order_relaxed); // a cancel is for a call in flight, not a later one
    if (!ensure_worker()) {
        out.r.status = VGPU_ERROR_NO_DEVICE;
        return out;
    }
    const auto w = exchange(op, args, in_bytes, flags, timeout.count() ? timeout : opts_.call_timeout);
    if (w == RpcChannel::Wait::Done) {
        out.r = ch_->reply();
        out.answered = true;
        return out;
    }
    out.r.status = w == RpcChannel::Wait::TimedOut ? kWorkerTimedOut : kWorkerDied;
    replace_worker(lost_text(w, op));
    return out;
}

uint8_t* RemoteBackend::area() { return ensure_worker() ? ch_->data() : nullptr; }

// ---- recovery ---------------------------------------------------------------

bool RemoteBackend::recover_from(Status s) {
    if (replaced_) {
        replaced_ = false;
        return true;
    }
    if (s == VGPU_SUCCESS || pid_ <= 0) return false;
    const Reply r = call(RpcOp::RecoverFrom, {static_cast<uint64_t>(s)});
    if (!r.answered) {
        replaced_ = false; // lost while recovering: replaced, reported now
        return true;
    }
    if (r.r.out[0] == 0) return false; // not sticky: every object still stands
    if (r.r.out[1] == 0) {
        // The driver refuses a new context in this process (driver 580 after
        // an illegal address): a fresh process gets one.
        replace_worker("cannot recover from " + std::string(status_name(s)) + " in place");
        replaced_ = false;
        return true;
    }
    // Recovered in place: the objects are gone, the RAM windows may have moved.
    pristine_ = true;
    for (SharedRam& ram : ram_) {
        if (!ram.seen) continue;
        const Reply a = call(RpcOp::GuestRamDeviceAddress, {reinterpret_cast<uint64_t>(ram.host)});
        if (!a.answered) break; // replaced: the new worker registered everything
        ram.dev = a.r.out[0];
    }
    replaced_ = false;
    refresh_info();
    rebuild_windows();
    return true;
}

} // namespace kvmgpu::vgpu
