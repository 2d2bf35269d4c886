#include "kvmtool-gpu/vmm/guest_threads.h"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/kvm/kvm_error.h"
#include "kvmtool-gpu/util/log.h"
#include "kvmtool-gpu/vmm/vcpu_seccomp.h"

namespace kvmgpu {

namespace {
// The watchdog's kick (vcpu_watchdog.cpp installs its do-nothing handler
// before any vCPU runs): it only has to make KVM_RUN or a wait return EINTR.
constexpr int kKickSignal = SIGUSR1;
constexpr auto kKickPeriod = std::chrono::milliseconds(20);

} // namespace

GuestThreads::GuestThreads(Env env) : env_(std::move(env)) {}

GuestThreads::~GuestThreads() { stop_and_join(); }

void GuestThreads::start(VcpuFd& first) {
    std::lock_guard lock(mu_);
    if (supervisor_.joinable()) return;
    first_ = &first;
    first_thread_ = pthread_self();
    supervisor_ = std::thread([this] { supervise(); });
}

int64_t GuestThreads::spawn(const linux_abi::ThreadStart& start, const kvm_regs& regs, const kvm_sregs& sregs) {
    std::unique_lock lock(mu_);
    if (quit_ || env_.group.ended() || !supervisor_.joinable()) return -EAGAIN;
    Request req{&start, &regs, &sregs};
    requests_.push_back(&req);
    supervisor_cv_.notify_all();
    change_cv_.wait(lock, [&] { return req.done; });
    return req.result;
}

void GuestThreads::supervise() {
    std::unique_lock lock(mu_);
    for (;;) {
        while (!requests_.empty()) {
            Request* r = requests_.front();
            requests_.pop_front();
            const bool stopping = quit_ || env_.group.ended();
            r->result = stopping ? -EAGAIN : create(*r);
            r->done = true;
            change_cv_.notify_all();
        }
        bool any_live = false;
        for (const auto& s : slots_) any_live |= s->live;
        if (quit_ && !any_live) break;
        if (quit_ || env_.group.ended()) {
            kick_all(); // again each period: a kick may land just before a KVM_RUN or a wait starts
            supervisor_cv_.wait_for(lock, kKickPeriod, [&] { return !requests_.empty(); });
        } else {
            supervisor_cv_.wait(lock, [&] { return !requests_.empty() || env_.group.ended() || quit_; });
        }
    }
    for (auto& s : slots_)
        if (s->thread.joinable()) s->thread.join(); // each has marked itself not live: it is returning
}

int64_t GuestThreads::create(const Request& r) {
    uint32_t live = 1; // the first thread, which counts even after its exit (its vCPU is not reused)
    Slot* free_slot = nullptr;
    for (auto& s : slots_) {
        if (s->live) ++live;
        else if (!free_slot) free_slot = s.get();
    }
    if (live >= env_.max_threads) {
        if (!std::exchange(limit_logged_, true))
            log_warn("linux guest: thread limit reached (%u alive; --max-threads): clone returns EAGAIN", live);
        return -EAGAIN;
    }
    try {
        if (!free_slot) {
            auto slot = std::make_unique<Slot>();
            slot->vcpu = env_.vm.create_vcpu(static_cast<uint32_t>(slots_.size() + 1));
            slot->vcpu->set_cpuid(env_.cpuid); // once: KVM refuses CPUID changes after a vCPU has run
            slots_.push_back(std::move(slot));
            free_slot = slots_.back().get();
        } else if (free_slot->thread.joinable()) {
            free_slot->thread.join(); // it marked itself not live as its last step
        }
        env_.process.prepare_thread_vcpu(*free_slot->vcpu, *r.regs, *r.sregs);
        free_slot->tid = r.start->tid;
        free_slot->live = true;
        env_.group.thread_started();
        free_slot->thread = std::thread([this, free_slot] { run_thread(*free_slot); });
    } catch (const KvmError& e) {
        if (free_slot) free_slot->live = false;
        log_warn("linux guest: no vCPU for a new thread (%s): clone returns EAGAIN", e.what());
        return -EAGAIN;
    } catch (const std::system_error& e) {
        free_slot->live = false;
        env_.group.thread_left(std::nullopt);
        log_warn("linux guest: no host thread for a new guest thread (%s): clone returns EAGAIN", e.what());
        return -EAGAIN;
    }
    ++started_;
    return r.start->tid;
}

void GuestThreads::run_thread(Slot& slot) {
    VcpuContext ctx(*slot.vcpu, slot.tid);
    bool confined = true;
    if (env_.seccomp) {
        try {
            confine_vcpu_thread(slot.vcpu->fd(), true, env_.vm.fd());
        } catch (const std::system_error& e) {
            confined = false;
            env_.group.end(GroupEnd{RunOutcome::Unexpected, 0, e.what(), ""});
        }
    }
    if (confined) env_.loop.run(ctx);
    env_.group.thread_left(ctx.exit_code());
    std::lock_guard lock(mu_);
    slot.live = false;
    supervisor_cv_.notify_all();
}

void GuestThreads::kick_all() {
    for (auto& s : slots_)
        if (s->live) {
            s->vcpu->request_immediate_exit();
            pthread_kill(s->thread.native_handle(), kKickSignal);
        }
    if (first_ && !quit_) {
        first_->request_immediate_exit();
        pthread_kill(first_thread_, kKickSignal);
    }
}

void GuestThreads::wake() {
    { std::lock_guard lock(mu_); } // the supervisor waits under mu_: no wake-up lost between its check and its wait
    supervisor_cv_.notify_all();
}

uint32_t GuestThreads::threads_started() const {
    std::lock_guard lock(mu_);
    return started_;
}

void GuestThreads::stop_and_join() {
    if (!env_.group.ended()) // every loop stops only for the group's end
        env_.group.end(GroupEnd{RunOutcome::Interrupted, 0, "the VMM stopped the guest's threads", ""});
    {
        std::lock_guard lock(mu_);
        quit_ = true; // the first thread is leaving its run loop: no more kicks for it
    }
    env_.process.server().request_stop();
    supervisor_cv_.notify_all();
    if (supervisor_.joinable()) supervisor_.join();
}

} // namespace kvmgpu
