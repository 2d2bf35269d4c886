// StopOnInterrupt: SIGTERM becomes one on_signal call; the end of its life
// wakes its waiter and gives the signals back.
#include "kvmtool-gpu/cli/interrupt_stop.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kvmgpu::cli {
namespace {

bool blocked(int sig) {
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, nullptr, &now);
    return sigismember(&now, sig) == 1;
}

TEST(StopOnInterrupt, ASigtermCallsOnSignalOnce) {
    std::atomic<int> seen{0}, which{0};
    {
        StopOnInterrupt stop([&](int sig) { which = sig, ++seen; });
        EXPECT_TRUE(blocked(SIGTERM)) << "blocked here, taken by the waiter";
        kill(getpid(), SIGTERM);
        // The waiter takes it: wait for that (bounded by ctest's timeout, not a threshold).
        while (seen.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(seen.load(), 1);
    EXPECT_EQ(which.load(), SIGTERM);
    EXPECT_FALSE(blocked(SIGTERM)) << "the old mask is back";
}

TEST(StopOnInterrupt, EndingWithoutASignalCallsNothing) {
    std::atomic<int> seen{0};
    for (int i = 0; i < 20; ++i) { // each end wakes the waiter (it would otherwise wait out its poll)
        StopOnInterrupt stop([&](int) { ++seen; });
    }
    EXPECT_EQ(seen.load(), 0);
    EXPECT_FALSE(blocked(SIGINT));
}

} // namespace
} // namespace kvmgpu::cli
