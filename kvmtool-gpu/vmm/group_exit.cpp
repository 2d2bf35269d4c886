#include "kvmtool-gpu/vmm/group_exit.h"

#include <chrono>
#include <cstdio>

namespace kvmgpu {

void GroupExit::end(GroupEnd e) {
    {
        std::lock_guard lock(mu_);
        if (end_) return;
        end_ = std::move(e);
        ended_.store(true, std::memory_order_release);
    }
    changed_.notify_all();
    if (on_end_) on_end_();
}

void GroupExit::watch(const VcpuWatchdog& watchdog, double timeout_s) {
    std::lock_guard lock(mu_);
    watchdog_ = &watchdog;
    timeout_s_ = timeout_s;
}

bool GroupExit::end_by_watchdog(VcpuContext& first) {
    if (!watchdog_ || !watchdog_->ended()) return false;
    if (watchdog_->interrupted()) {
        first.end(RunOutcome::Interrupted, "stopped on request (Ctrl-C)");
    } else {
        char line[96];
        std::snprintf(line, sizeof line, "guest did not exit within %.1f s (--timeout)", timeout_s_);
        first.end(RunOutcome::Timeout, line);
    }
    if (auto e = first.take_end()) end(std::move(*e));
    return true;
}

bool GroupExit::over(VcpuContext& ctx) {
    if (ended()) return true;
    return ctx.first() && end_by_watchdog(ctx);
}

void GroupExit::thread_started() {
    std::lock_guard lock(mu_);
    ++others_live_;
}

void GroupExit::thread_left(std::optional<uint32_t> exit_code) {
    {
        std::lock_guard lock(mu_);
        --others_live_;
        if (exit_code) {
            last_exit_code_ = *exit_code;
            last_exit_at_ = std::chrono::steady_clock::now();
        }
    }
    changed_.notify_all();
}

GroupEnd GroupExit::settle(VcpuContext& first) {
    if (const auto code = first.exit_code(); code && !ended()) {
        {
            // The first thread's code, unless another thread exited after it
            // (possibly before this look: the exits are ordered by their times).
            std::lock_guard lock(mu_);
            if (!last_exit_at_ || *last_exit_at_ < first.exited_at()) last_exit_code_ = *code;
        }
        // The watchdog's kick cannot wake a condition variable: look at it every slice.
        constexpr auto kSlice = std::chrono::milliseconds(20);
        for (;;) {
            if (end_by_watchdog(first)) break;
            std::unique_lock lock(mu_);
            if (changed_.wait_for(lock, kSlice, [&] { return end_.has_value() || others_live_ == 0; })) {
                if (!end_) {
                    const uint32_t last = last_exit_code_;
                    lock.unlock();
                    end(GroupEnd{RunOutcome::GuestExit, last,
                                 "guest exited with code " + std::to_string(last) + " (its last thread's exit)", ""});
                }
                break;
            }
        }
    }
    std::lock_guard lock(mu_);
    // A loop returns only with an end reported or its thread's exit; the
    // first's end, when it has one, is already the group's or lost to an earlier one.
    return end_.value_or(GroupEnd{RunOutcome::Unexpected, 0, "the first vCPU's loop ended without an end", ""});
}

} // namespace kvmgpu
