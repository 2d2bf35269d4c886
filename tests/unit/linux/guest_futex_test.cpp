// futex_wait's watch before it sleeps (--futex-spin-us): the futex contract
// holds with it (EAGAIN, time-outs, stops), and a store alone ends the wait.
#include <gtest/gtest.h>

#include <linux/futex.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <thread>

#include "kvmtool-gpu/vmm/linux/guest_futex.h"

namespace kvmgpu::linux_abi {
namespace {

constexpr int64_t kLongSpin = 10'000'000'000; // longer than any of these tests runs

TEST(GuestFutexSpin, ChangedValueAtTheStartIsEagain) {
    uint32_t word = 2;
    std::atomic<bool> stopping{false};
    EXPECT_EQ(futex_wait(&word, 1, FUTEX_BITSET_MATCH_ANY, std::nullopt, stopping, kLongSpin), -EAGAIN);
}

TEST(GuestFutexSpin, DeadlineStillEndsTheWait) {
    uint32_t word = 1;
    std::atomic<bool> stopping{false};
    const FutexDeadline soon = deadline_after(CLOCK_MONOTONIC, timespec{0, 20'000'000});
    EXPECT_EQ(futex_wait(&word, 1, FUTEX_BITSET_MATCH_ANY, soon, stopping, 1'000'000), -ETIMEDOUT);
}

TEST(GuestFutexSpin, AStoreWithoutAWakeEndsTheWatch) {
    uint32_t word = 1;
    std::atomic<bool> stopping{false}, waiting{false};
    std::thread other([&] {
        while (!waiting.load(std::memory_order_acquire)) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(1)); // mostly inside the watch by now
        __atomic_store_n(&word, 2, __ATOMIC_RELEASE);
    });
    waiting.store(true, std::memory_order_release);
    // No FUTEX_WAKE ever comes: only the watch (or, if the store won the
    // race, the value check at the start) ends this wait.
    const int64_t r = futex_wait(&word, 1, FUTEX_BITSET_MATCH_ANY, std::nullopt, stopping, kLongSpin);
    EXPECT_TRUE(r == 0 || r == -EAGAIN) << r;
    other.join();
}

TEST(GuestFutexSpin, StoppingEndsTheWatch) {
    uint32_t word = 1;
    std::atomic<bool> stopping{false};
    std::thread other([&] { stopping.store(true, std::memory_order_release); });
    EXPECT_EQ(futex_wait(&word, 1, FUTEX_BITSET_MATCH_ANY, std::nullopt, stopping, kLongSpin), -EINTR);
    other.join();
}

} // namespace
} // namespace kvmgpu::linux_abi
