// Notification suppression under stress: a million commands (NOPs) in
// bursts with random pauses, the guest kicking only when the event index
// asks (as the guest library does), against the inline consumer and a GPU
// worker on the host backend. None is lost: every burst completes within a
// generous bound. None is late: no consumer ever woke by its own time-out
// to find commands waiting (missed_kicks), which is what a lost wake-up
// would look like. No wall-clock performance threshold.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>

#include "kvmtool-gpu/util/spin.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

using namespace std::chrono_literals;

// A pause between bursts: often none, sometimes a spin of a few us (inside
// any polling window), a sleep around the adaptive cap (kStressCapUs), or a
// long idle (past it: the consumer sleeps).
void random_pause(std::mt19937_64& rng) {
    const uint32_t r = rng() % 100;
    if (r < 55) return;
    if (r < 80) {
        const uint64_t until = now_ns() + rng() % 20'000;
        while (now_ns() < until) cpu_relax();
    } else if (r < 99) {
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
    } else {
        std::this_thread::sleep_for(std::chrono::microseconds(300 + rng() % 1700));
    }
}

// Posts `total` NOPs in bursts of 1..ring entries, flushing (the kick
// decision) at random points and after each burst, and waits for each
// burst. Returns the commands completed.
// A cap below the long pauses, so the consumer keeps going to sleep and
// being woken all through the run (the default cap would outlast them).
constexpr uint32_t kStressCapUs = 200;

uint64_t run_stress(VgpuRig& rig, uint64_t total, uint64_t seed) {
    std::mt19937_64 rng(seed);
    uint64_t sent = 0;
    while (sent < total) {
        const uint64_t burst = std::min<uint64_t>(1 + rng() % rig.entries, total - sent);
        for (uint64_t i = 0; i < burst; ++i) {
            rig.post({.opcode = VGPU_OP_NOP});
            if (rng() % 4 == 0) rig.flush(); // deferred submission flushes at varied points
        }
        rig.flush();
        sent += burst;
        const auto until = std::chrono::steady_clock::now() + 20s; // generous: lost, not slow
        while (rig.consumer() != static_cast<uint32_t>(sent)) {
            if (std::chrono::steady_clock::now() > until) {
                ADD_FAILURE() << "commands lost: consumer " << rig.consumer() << ", published " << sent;
                return rig.consumer();
            }
            cpu_relax();
        }
        random_pause(rng);
    }
    return sent;
}

void expect_none_lost_none_late(VgpuRig& rig, uint64_t total, bool expect_suppression) {
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const uint64_t before = rig.dev->counters().commands;
    EXPECT_EQ(run_stress(rig, total, total + 28), total);
    const VgpuCounterSnapshot c = rig.dev->counters();
    EXPECT_EQ(c.commands - before, total);
    EXPECT_EQ(c.errors, 0u);
    EXPECT_EQ(c.missed_kicks, 0u) << "a consumer slept through published commands";
    EXPECT_GT(rig.kicks_sent, 0u);
    EXPECT_GT(c.wakeups, 0u) << "the consumer never slept: the pauses did not test the wake-up";
    if (expect_suppression) {
        EXPECT_GT(rig.kicks_suppressed, 0u);
    }
    std::printf("[ stress   ] %llu commands, %llu kicks, %llu suppressed, %llu consumer wake-ups\n",
                static_cast<unsigned long long>(total), static_cast<unsigned long long>(rig.kicks_sent),
                static_cast<unsigned long long>(rig.kicks_suppressed), static_cast<unsigned long long>(c.wakeups));
}

// A million commands; a quarter under AddressSanitizer, whose run is for
// memory errors (each command is checked there as well) and is ~3x slower.
#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kCommands = 250'000;
#else
constexpr uint64_t kCommands = 1'000'000;
#endif

TEST(KickStress, InlineAdaptiveLosesNone) {
    VgpuRig rig(VgpuOptions{.doorbell = DoorbellMode::Adaptive, .poll_max_us = kStressCapUs});
    expect_none_lost_none_late(rig, kCommands, true);
}

TEST(KickStress, WorkerAdaptiveLosesNone) {
    WorkerVgpu w(WorkerOptions{}, VgpuOptions{.doorbell = DoorbellMode::Adaptive, .poll_max_us = kStressCapUs});
    ASSERT_TRUE(w.worker);
    expect_none_lost_none_late(w.rig, kCommands, true);
}

// No polling window: the consumer sleeps at every gap, the most
// transitions between polling and sleeping.
TEST(KickStress, InlineTrapSleepsAtEveryGap) {
    VgpuRig rig(VgpuOptions{.doorbell = DoorbellMode::Trap});
    expect_none_lost_none_late(rig, kCommands / 4, false);
}

TEST(KickStress, WorkerIoeventfdSleepsAtEveryGap) {
    WorkerVgpu w(WorkerOptions{}, VgpuOptions{.doorbell = DoorbellMode::Ioeventfd});
    ASSERT_TRUE(w.worker);
    expect_none_lost_none_late(w.rig, kCommands / 4, false);
}

} // namespace
} // namespace kvmgpu::vgpu::test
