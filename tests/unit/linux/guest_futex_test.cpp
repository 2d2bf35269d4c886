// futex_wait's watch before it sleeps (--futex-spin-us): the futex contract
// holds with it (EAGAIN, time-outs, stops), and a store alone ends the wait.
#include <gtest/gtest.h>

#include <linux/futex.h>

#include <atomic>
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
    std::atomic<bool> stopping{false};
    std::thread other([&] { __atomic_store_n(&word, 2, __ATOMIC_RELEASE); });
    EXPECT_EQ(futex_wait(&word, 1, FUTEX_BITSET_MATCH_ANY, std::nullopt, stopping, kLongSpin), 0);
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
