#include "kvmtool-gpu/remote/gpu_server.h"

#include <list>
#include <thread>

#include "kvmtool-gpu/remote/server_session.h"
#include "kvmtool-gpu/remote/ucx_link.h"
#include "kvmtool-gpu/util/log.h"

namespace kvmgpu::remote {

struct GpuServer::State {
    GpuServerOptions opts;
    std::shared_ptr<UcxContext> ctx;
    std::unique_ptr<UcxListener> listener;
    GpuServerStats stats;
    std::atomic<bool> ending{false};
    struct Running {
        std::thread thread;
        std::atomic<bool> done{false};
    };
    std::list<Running> sessions;
    std::atomic<uint32_t> alive{0};

    void reap() {
        for (auto it = sessions.begin(); it != sessions.end();) {
            if (!it->done.load()) {
                ++it;
                continue;
            }
            it->thread.join();
            it = sessions.erase(it);
        }
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
    s->ctx = UcxContext::create(why);
    if (!s->ctx) return nullptr;
    s->listener = UcxListener::listen(s->ctx, s->opts.listen, why);
    if (!s->listener) return nullptr;
    return std::unique_ptr<GpuServer>(new GpuServer(std::move(s)));
}

GpuServer::~GpuServer() {
    s_->ending = true;
    for (auto& r : s_->sessions) r.thread.join();
}

uint16_t GpuServer::port() const { return s_->listener->port(); }
const GpuServerStats& GpuServer::stats() const { return s_->stats; }

void GpuServer::run(const std::atomic<bool>& stop) {
    State& s = *s_;
    while (!stop.load(std::memory_order_relaxed)) {
        s.reap();
        ucp_conn_request_h request = s.listener->take(std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
        if (!request) continue;
        if (s.alive.load() >= s.opts.max_sessions) {
            s.listener->reject(request);
            ++s.stats.refused;
            log_warn("gpu-server: refused a connection: %u sessions already (--max-sessions)", s.opts.max_sessions);
            continue;
        }
        ++s.alive;
        State::Running& r = s.sessions.emplace_back();
        r.thread = std::thread([&s, &r, request] {
            serve_session(s.ctx, request, s.opts, s.stats, s.ending);
            --s.alive;
            r.done = true;
        });
    }
    s.ending = true;
    for (auto& r : s.sessions) r.thread.join();
    s.sessions.clear();
    s.ending = false;
}

} // namespace kvmgpu::remote
