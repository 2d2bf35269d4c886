#include "kvmtool-gpu/vmm/gpu_share.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace kvmgpu {

namespace {
constexpr std::chrono::milliseconds kWatchPeriod{500};
}

const char* to_string(GpuShareMode m) { return m == GpuShareMode::Mps ? "mps" : "contexts"; }
const char* to_string(MpsFallback f) { return f == MpsFallback::Contexts ? "contexts" : "stop"; }

void validate(const GpuShareOptions& o) {
    if (o.thread_percentage > 100) throw std::invalid_argument("--mps-thread-percentage: 1..100");
    if (o.pinned_mem_limit != 0 && o.pinned_mem_limit < kMinMpsMemLimit)
        throw std::invalid_argument("--mps-mem-limit: at least 1M");
    if (o.pinned_mem_limit % kMinMpsMemLimit != 0) throw std::invalid_argument("--mps-mem-limit: whole MiB (e.g. 512M, 4G)");
    if (o.mode == GpuShareMode::Contexts &&
        (!o.mps_pipe.empty() || o.thread_percentage != 0 || o.pinned_mem_limit != 0))
        throw std::invalid_argument("--mps-pipe, --mps-thread-percentage and --mps-mem-limit need --gpu-share mps");
}

vgpu::EnvList mps_limit_env(const GpuShareOptions& o, std::span<const int> gpus) {
    vgpu::EnvList env;
    if (o.thread_percentage) env.emplace_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::to_string(o.thread_percentage));
    if (o.pinned_mem_limit) {
        std::string v;
        for (int g : std::set<int>(gpus.begin(), gpus.end()))
            v += (v.empty() ? "" : ",") + std::to_string(g) + "=" + std::to_string(o.pinned_mem_limit >> 20) + "M";
        env.emplace_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", v);
    }
    return env;
}

std::shared_ptr<GpuShare> GpuShare::open(const GpuShareOptions& o, std::span<const int> gpus) {
    validate(o);
    std::shared_ptr<GpuShare> s(new GpuShare);
    s->opts_ = o;
    if (o.mode == GpuShareMode::Contexts) return s;
    try {
        s->daemon_ = o.mps_pipe.empty() ? vgpu::MpsControlDaemon::start() : vgpu::MpsControlDaemon::attach(o.mps_pipe);
    } catch (const vgpu::MpsError& e) {
        if (o.fallback == MpsFallback::Stop)
            throw vgpu::MpsError(std::string("--gpu-share mps: ") + e.what() + " (--mps-fallback contexts runs without MPS)");
        s->fallback_note_ = e.what();
        std::fprintf(stderr, "kvmtool-gpu: warning: --gpu-share mps: %s; falling back to contexts\n", e.what());
        return s;
    }
    vgpu::EnvList env = s->daemon_->client_env();
    for (auto& kv : mps_limit_env(o, gpus)) env.push_back(std::move(kv));
    s->group_ = std::make_shared<vgpu::MpsServerGroup>(std::move(env));
    // The watch is born with every signal blocked: Ctrl-C is for the VMM's
    // other threads (StopOnInterrupt takes it with sigtimedwait), and a
    // thread that left it unblocked would take it and die of it.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    s->watcher_ = std::thread([raw = s.get()] { raw->watch(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return s;
}

GpuShare::~GpuShare() {
    done_.store(true);
    if (watcher_.joinable()) watcher_.join();
    if (daemon_) {
        const std::string why = daemon_->stop();
        if (!why.empty()) std::fprintf(stderr, "kvmtool-gpu: warning: MPS: %s\n", why.c_str());
    }
}

void GpuShare::watch() {
    while (!done_.load()) {
        for (auto slept = std::chrono::milliseconds(0); slept < kWatchPeriod && !done_.load();
             slept += std::chrono::milliseconds(50))
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!done_.load() && !check_daemon()) return;
    }
}

bool GpuShare::check_daemon() {
    std::lock_guard lk(mu_);
    if (!group_) return true;
    if (!group_->lost_reason().empty()) return false; // already handled
    if (daemon_->alive()) return true;
    const std::string why = "the MPS control daemon at " + daemon_->pipe_dir() + " is gone mid-run";
    if (opts_.fallback == MpsFallback::Contexts) {
        std::fprintf(stderr, "kvmtool-gpu: warning: %s; every VM's GPU worker is replaced by one without MPS\n",
                     why.c_str());
        group_->fall_back_to_contexts(why);
    } else {
        std::fprintf(stderr, "kvmtool-gpu: error: %s; the VMs' GPU commands fail from now on (--mps-fallback stop)\n",
                     why.c_str());
        group_->stop(why);
    }
    std::fflush(stderr);
    return false;
}

std::string GpuShare::describe() const {
    if (!group_) return fallback_note_.empty() ? "contexts" : "contexts (fallback from mps: " + fallback_note_ + ")";
    std::string d = "mps, ";
    d += daemon_->started_here() ? "control daemon started for the run (pipe " + daemon_->pipe_dir() + ")"
                                 : "attached to the control daemon at " + daemon_->pipe_dir();
    if (opts_.thread_percentage) d += "; active thread percentage " + std::to_string(opts_.thread_percentage);
    if (opts_.pinned_mem_limit) d += "; pinned device memory limit " + std::to_string(opts_.pinned_mem_limit >> 20) + " MiB";
    d += std::string("; fallback ") + to_string(opts_.fallback);
    if (const std::string lost = group_->lost_reason(); !lost.empty()) d += "; LOST: " + lost;
    return d;
}

} // namespace kvmgpu
