#include "kvmtool-gpu/devices/vgpu_worker/mps_server_group.h"

namespace kvmgpu::vgpu {

MpsServerGroup::MpsServerGroup(EnvList client_env, std::chrono::milliseconds recover_bound)
    : env_(std::move(client_env)), recover_bound_(recover_bound) {}

EnvList MpsServerGroup::client_env() const {
    std::lock_guard lk(mu_);
    return lost_reason_.empty() ? env_ : EnvList{};
}

uint64_t MpsServerGroup::generation() const {
    std::lock_guard lk(mu_);
    return generation_;
}

void MpsServerGroup::next_generation_locked() {
    ++generation_;
    fault_at_ = std::chrono::steady_clock::now();
}

bool MpsServerGroup::report_fault(uint64_t generation, Status status) {
    std::lock_guard lk(mu_);
    if (generation != generation_) return false; // already affected by a fault being recovered from
    fault_status_ = status;
    ++faults_;
    next_generation_locked();
    return true;
}

Status MpsServerGroup::fault_status() const {
    std::lock_guard lk(mu_);
    return fault_status_;
}

uint64_t MpsServerGroup::faults() const {
    std::lock_guard lk(mu_);
    return faults_;
}

void MpsServerGroup::worker_started(uint64_t generation) {
    std::lock_guard lk(mu_);
    ++live_[generation];
}

void MpsServerGroup::worker_ended(uint64_t generation) {
    std::lock_guard lk(mu_);
    auto it = live_.find(generation);
    if (it == live_.end()) return;
    if (--it->second == 0) live_.erase(it);
}

bool MpsServerGroup::may_start() const {
    std::lock_guard lk(mu_);
    if (stopped_) return false;
    // live_ is ordered: its first key is the oldest generation still alive.
    return live_.empty() || live_.begin()->first >= generation_;
}

bool MpsServerGroup::recovering() const {
    std::lock_guard lk(mu_);
    if (stopped_ || generation_ == 0) return false;
    const bool old_alive = !live_.empty() && live_.begin()->first < generation_;
    // After a fault the server may refuse clients a while longer (not ready);
    // after a fall-back new workers need no server.
    return old_alive || (lost_reason_.empty() && std::chrono::steady_clock::now() - fault_at_ < recover_bound_);
}

void MpsServerGroup::fall_back_to_contexts(const std::string& why) {
    std::lock_guard lk(mu_);
    if (!lost_reason_.empty()) return;
    lost_reason_ = why;
    fault_status_ = VGPU_ERROR_LAUNCH_FAILED; // no driver status: the daemon went away
    next_generation_locked();
}

void MpsServerGroup::stop(const std::string& why) {
    std::lock_guard lk(mu_);
    if (stopped_) return;
    stopped_ = true;
    if (lost_reason_.empty()) lost_reason_ = why;
    fault_status_ = VGPU_ERROR_LAUNCH_FAILED;
    next_generation_locked();
}

bool MpsServerGroup::stopped() const {
    std::lock_guard lk(mu_);
    return stopped_;
}

std::string MpsServerGroup::lost_reason() const {
    std::lock_guard lk(mu_);
    return lost_reason_;
}

} // namespace kvmgpu::vgpu
