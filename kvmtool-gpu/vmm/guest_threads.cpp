#include "kvmtool-gpu/vmm/guest_threads.h"

#include <signal.h>

#include <cerrno>
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

GroupEnd fault_end(RunOutcome outcome, std::string detail, VcpuFd& vcpu) {
    GroupEnd e{outcome, 0, std::move(detail), ""};
    try {
        e.register_dump = vcpu.dump_state();
    } catch (const KvmError& err) {
        e.register_dump = err.what();
    }
    return e;
}
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
    if (stopping_ || !supervisor_.joinable()) return -EAGAIN;
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
            r->result = stopping_ ? -EAGAIN : create(*r);
            r->done = true;
            change_cv_.notify_all();
        }
        bool any_live = false;
        for (const auto& s : slots_) any_live |= s->live;
        if (quit_ && !any_live) break;
        if (stopping_) {
            kick_all(); // again each period: a kick may land just before a KVM_RUN or a wait starts
            supervisor_cv_.wait_for(lock, kKickPeriod, [&] { return !requests_.empty(); });
        } else {
            supervisor_cv_.wait(lock, [&] { return !requests_.empty() || stopping_ || quit_; });
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
        free_slot->thread = std::thread([this, free_slot] { run_thread(*free_slot); });
    } catch (const KvmError& e) {
        if (free_slot) free_slot->live = false;
        log_warn("linux guest: no vCPU for a new thread (%s): clone returns EAGAIN", e.what());
        return -EAGAIN;
    } catch (const std::system_error& e) {
        free_slot->live = false;
        log_warn("linux guest: no host thread for a new guest thread (%s): clone returns EAGAIN", e.what());
        return -EAGAIN;
    }
    ++started_;
    return r.start->tid;
}

void GuestThreads::run_thread(Slot& slot) {
    bool exited = false;
    uint32_t code = 0;
    std::optional<GroupEnd> end;
    if (env_.seccomp) {
        try {
            confine_vcpu_thread(slot.vcpu->fd(), true, env_.vm.fd());
        } catch (const std::system_error& e) {
            end = GroupEnd{RunOutcome::Unexpected, 0, e.what(), ""};
        }
    }
    if (!end) end = loop(slot, exited, code);
    if (exited) env_.process.server().thread_exit(slot.tid);
    if (end) end_group(std::move(*end));
    std::lock_guard lock(mu_);
    if (exited) last_exit_code_ = code;
    slot.live = false;
    change_cv_.notify_all();
    supervisor_cv_.notify_all();
}

std::optional<GroupEnd> GuestThreads::loop(Slot& slot, bool& exited, uint32_t& code) {
    VcpuFd& vcpu = *slot.vcpu;
    const std::string thread = " (thread " + std::to_string(slot.tid) + ")";
    std::string last_call; // for a triple fault's report
    for (;;) {
        if (stopping_.load(std::memory_order_acquire)) return std::nullopt;
        VcpuExit ex;
        try {
            ex = vcpu.run();
        } catch (const KvmError& e) {
            return fault_end(RunOutcome::Unexpected, e.what(), vcpu);
        }
        if (auto* io = std::get_if<exit::PortIo>(&ex)) {
            if (io->port == KVMGPU_LINUX_SYSCALL_PORT && !io->in) {
                std::optional<linux_abi::SyscallOutcome> call;
                try {
                    call = env_.process.on_port_write(vcpu, slot.tid);
                } catch (const KvmError& e) {
                    return fault_end(RunOutcome::Unexpected, e.what(), vcpu);
                }
                if (call) {
                    last_call = linux_abi::describe_call(*call);
                    if (call->exited)
                        return GroupEnd{RunOutcome::GuestExit, static_cast<uint32_t>(call->exit_code),
                                        "guest exited with code " + std::to_string(call->exit_code) + " (thread " +
                                            std::to_string(slot.tid) + ")",
                                        ""};
                    if (call->thread_exited) {
                        exited = true;
                        code = static_cast<uint32_t>(call->exit_code);
                        return std::nullopt;
                    }
                    if (!call->stopped.empty())
                        return fault_end(RunOutcome::GuestFault, call->stopped + " (thread " + std::to_string(slot.tid) + ")",
                                         vcpu);
                    continue;
                }
            }
            if (std::string refused = env_.process.port_refusal(vcpu, io->port, io->in); !refused.empty())
                return fault_end(RunOutcome::GuestFault, refused + thread, vcpu);
            // A fault whose signal the guest handles: its handler runs on this thread instead.
            if (io->port == KVMGPU_FAULT_PORT && io->size == 4 && io->count == 1) {
                uint32_t vector = 0;
                std::memcpy(&vector, io->data.data(), 4);
                try {
                    if (env_.process.deliver_fault(vcpu, vector, slot.tid)) continue;
                } catch (const KvmError& e) {
                    return fault_end(RunOutcome::Unexpected, e.what(), vcpu);
                }
            }
            for (uint32_t i = 0; i < io->count; ++i) {
                auto chunk = io->data.subspan(uint64_t{i} * io->size, io->size);
                if (io->in) env_.pio.read(io->port, chunk);
                else env_.pio.write(io->port, chunk);
            }
            if (env_.after_port_write)
                if (auto end = env_.after_port_write(vcpu)) {
                    end->detail += " (thread " + std::to_string(slot.tid) + ")";
                    return end;
                }
        } else if (auto* m = std::get_if<exit::Mmio>(&ex)) {
            std::optional<std::string> in_window;
            try {
                in_window = env_.process.window_exit(vcpu, slot.tid, m->addr, m->data, m->write);
            } catch (const KvmError& e) {
                return fault_end(RunOutcome::Unexpected, e.what(), vcpu);
            }
            if (in_window) {
                if (!in_window->empty()) return fault_end(RunOutcome::GuestFault, *in_window + thread, vcpu);
                continue;
            }
            if (m->write) env_.mmio.write(m->addr, m->data);
            else env_.mmio.read(m->addr, m->data);
            if (env_.after_mmio)
                if (auto end = env_.after_mmio(vcpu)) {
                    end->detail += thread;
                    return end;
                }
        } else if (std::holds_alternative<exit::Interrupted>(ex)) {
            continue; // the loop's head looks at stopping_
        } else if (std::holds_alternative<exit::Shutdown>(ex)) {
            const std::string why = env_.describe_shutdown ? env_.describe_shutdown(vcpu, last_call)
                                                           : "guest fault (KVM_EXIT_SHUTDOWN)";
            return fault_end(RunOutcome::TripleFault, why + thread, vcpu);
        } else if (std::holds_alternative<exit::Halt>(ex)) {
            return fault_end(RunOutcome::Halted, "guest thread " + std::to_string(slot.tid) + " halted", vcpu);
        } else {
            return fault_end(RunOutcome::Unexpected,
                             "unexpected exit on the vCPU of thread " + std::to_string(slot.tid), vcpu);
        }
    }
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

void GuestThreads::end_group(GroupEnd end) {
    {
        std::lock_guard lock(mu_);
        if (!end_) end_ = std::move(end);
        stopping_ = true;
    }
    env_.process.server().request_stop();
    supervisor_cv_.notify_all();
    change_cv_.notify_all();
}

std::optional<GroupEnd> GuestThreads::group_end() const {
    std::lock_guard lock(mu_);
    return end_;
}

bool GuestThreads::others_gone(std::chrono::milliseconds slice) {
    std::unique_lock lock(mu_);
    auto gone = [&] {
        for (const auto& s : slots_)
            if (s->live) return false;
        return true;
    };
    change_cv_.wait_for(lock, slice, [&] { return gone() || end_.has_value(); });
    return gone();
}

void GuestThreads::first_exited(uint32_t code) {
    std::lock_guard lock(mu_);
    last_exit_code_ = code;
}

uint32_t GuestThreads::last_exit_code() const {
    std::lock_guard lock(mu_);
    return last_exit_code_;
}

uint32_t GuestThreads::threads_started() const {
    std::lock_guard lock(mu_);
    return started_;
}

void GuestThreads::stop_and_join() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
        quit_ = true; // the first thread is leaving its run loop: no more kicks for it
    }
    env_.process.server().request_stop();
    supervisor_cv_.notify_all();
    if (supervisor_.joinable()) supervisor_.join();
}

} // namespace kvmgpu
