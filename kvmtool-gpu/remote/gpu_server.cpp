#include "kvmtool-gpu/remote/gpu_server.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <list>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "kvmtool-gpu/remote/remote_wire.h"
#include "kvmtool-gpu/remote/server_session.h"
#include "kvmtool-gpu/remote/session_process.h"
#include "kvmtool-gpu/remote/ucx_link.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::remote {

namespace {

// The counters, in memory the session processes share with the server.
GpuServerStats* shared_stats() {
    void* p = mmap(nullptr, sizeof(GpuServerStats), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : new (p) GpuServerStats();
}

// How long a session process may take to end once told to, before it is killed.
constexpr auto kSessionEndGrace = std::chrono::seconds(5);

} // namespace

struct GpuServer::State {
    GpuServerOptions opts;
    GpuServerStats* stats = nullptr;
    std::unique_ptr<SessionSpawner> spawner;
    std::shared_ptr<UcxContext> ctx;
    std::unique_ptr<UcxListener> listener;
    struct FrontDoor {
        std::thread thread;
        std::atomic<bool> done{false};
    };
    std::list<FrontDoor> doors;
    std::mutex mu; // sessions, from the front doors' threads
    std::vector<SessionProcess> sessions;
    std::atomic<uint32_t> alive{0}; // front doors at work and sessions running

    ~State() {
        if (stats) munmap(stats, sizeof *stats);
    }

    // The VMM's key proved here, then sent to a session process of its own.
    void admit(ucp_conn_request_h request) {
        std::string why;
        auto link = UcxLink::accept(ctx, request, &why);
        if (!link) {
            log_warn("gpu-server: %s", why.c_str());
            --alive;
            return;
        }
        UcxMessage proof;
        if (!prove_key(*link, opts, *stats, &proof)) {
            --alive;
            return;
        }
        std::optional<SessionProcess> session = spawner->spawn(&why);
        if (!session) {
            refuse_welcome(*link, *stats, "no session: " + why);
            --alive;
            return;
        }
        {
            std::lock_guard lock(mu);
            sessions.push_back(*session); // counted in alive until it ends
        }
        const WireRedirect to{session->port, 0};
        link->send(kRedirect, &to, sizeof to, nullptr, 0, std::chrono::seconds(2));
        link->wait_for_peer_to_leave(std::chrono::seconds(2));
    }

    // Front doors that finished, and sessions whose process ended.
    void reap() {
        for (auto it = doors.begin(); it != doors.end();) {
            if (!it->done.load()) {
                ++it;
                continue;
            }
            it->thread.join();
            it = doors.erase(it);
        }
        std::lock_guard lock(mu);
        for (auto it = sessions.begin(); it != sessions.end();) {
            pollfd p{it->control, POLLIN | POLLRDHUP, 0};
            if (poll(&p, 1, 0) <= 0) {
                ++it;
                continue;
            }
            close(it->control);
            it = sessions.erase(it);
            --alive;
        }
    }

    // Every session told to stop, then waited for (killed past the grace).
    void end_sessions() {
        for (auto& d : doors) d.thread.join();
        doors.clear();
        std::lock_guard lock(mu);
        for (const SessionProcess& s : sessions) shutdown(s.control, SHUT_WR);
        const auto deadline = Clock::now() + kSessionEndGrace;
        for (const SessionProcess& s : sessions) {
            pollfd p{s.control, POLLRDHUP, 0};
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 0))) <= 0) kill(s.pid, SIGKILL);
            close(s.control);
        }
        sessions.clear();
        alive = 0;
    }
};

GpuServer::GpuServer(std::unique_ptr<State> s) : s_(std::move(s)) {}

std::unique_ptr<GpuServer> GpuServer::start(GpuServerOptions opts, std::string* why) {
    try {
        vgpu::validate(opts.vgpu);
    } catch (const std::exception& e) {
        *why = e.what();
        return nullptr;
    }
    auto s = std::make_unique<State>();
    s->opts = std::move(opts);
    s->stats = shared_stats();
    if (!s->stats) {
        *why = "cannot map the server's counters";
        return nullptr;
    }
    // Before any UCX state of this server: the session processes make their own.
    s->spawner = SessionSpawner::start(s->opts, s->stats, why);
    if (!s->spawner) return nullptr;
    s->ctx = UcxContext::create(why);
    if (!s->ctx) return nullptr;
    s->listener = UcxListener::listen(s->ctx, s->opts.listen, why);
    if (!s->listener) return nullptr;
    return std::unique_ptr<GpuServer>(new GpuServer(std::move(s)));
}

GpuServer::~GpuServer() { s_->end_sessions(); }

uint16_t GpuServer::port() const { return s_->listener->port(); }
const GpuServerStats& GpuServer::stats() const { return *s_->stats; }

std::vector<pid_t> GpuServer::session_pids() const {
    std::lock_guard lock(s_->mu);
    std::vector<pid_t> pids;
    for (const SessionProcess& p : s_->sessions) pids.push_back(p.pid);
    return pids;
}

void GpuServer::run(const std::atomic<bool>& stop) {
    State& s = *s_;
    while (!stop.load(std::memory_order_relaxed)) {
        s.reap();
        ucp_conn_request_h request = s.listener->take(std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
        if (!request) continue;
        if (s.alive.load() >= s.opts.max_sessions) {
            s.listener->reject(request);
            ++s.stats->refused;
            log_warn("gpu-server: refused a connection: %u sessions already (--max-sessions)", s.opts.max_sessions);
            continue;
        }
        ++s.alive;
        State::FrontDoor& d = s.doors.emplace_back();
        d.thread = std::thread([&s, &d, request] {
            s.admit(request);
            d.done = true;
        });
    }
    s.end_sessions();
}

} // namespace kvmgpu::remote
