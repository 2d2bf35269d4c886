// The arithmetic of notification suppression, without threads or clocks:
// the event index (vgpu_need_kick, vgpu_abi.h) across wrap-around of the
// free-running indices, and the adaptive polling window (PollWindow).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "kvmtool-gpu/devices/vgpu/poll_window.h"

namespace kvmgpu::vgpu {
namespace {

// The rule, spelled out: kick iff the event index lies in [old, new).
bool in_published_range(uint32_t event, uint32_t new_idx, uint32_t old_idx) {
    const uint64_t span = (uint64_t{new_idx} + (1ull << 32) - old_idx) % (1ull << 32);
    const uint64_t at = (uint64_t{event} + (1ull << 32) - old_idx) % (1ull << 32);
    return at < span;
}

TEST(EventIndex, KicksOnlyWhenTheSleepingIndexIsPublished) {
    EXPECT_TRUE(vgpu_need_kick(5, 6, 5));   // asleep at 5, command 5 published
    EXPECT_FALSE(vgpu_need_kick(5, 5, 5));  // nothing published
    EXPECT_FALSE(vgpu_need_kick(4, 6, 5));  // the consumer polls (its index behind what was decided)
    EXPECT_FALSE(vgpu_need_kick(6, 6, 5));  // asleep at 6: command 6 not yet published
    EXPECT_TRUE(vgpu_need_kick(3, 10, 3));  // a deferred batch holding the index
    EXPECT_TRUE(vgpu_need_kick(9, 10, 3));
    EXPECT_FALSE(vgpu_need_kick(10, 10, 3));
}

TEST(EventIndex, WrapsAround) {
    const uint32_t old = 0xFFFFFFFEu, now = 2;
    for (uint32_t e : {0xFFFFFFFEu, 0xFFFFFFFFu, 0u, 1u}) EXPECT_TRUE(vgpu_need_kick(e, now, old)) << e;
    for (uint32_t e : {0xFFFFFFFDu, 2u, 3u, 0x7FFFFFFFu}) EXPECT_FALSE(vgpu_need_kick(e, now, old)) << e;
    EXPECT_TRUE(vgpu_need_kick(0xFFFFFFFFu, 0, 0xFFFFFFFFu));
    EXPECT_FALSE(vgpu_need_kick(0, 0, 0xFFFFFFFFu));
}

TEST(EventIndex, MatchesTheRuleEverywhere) {
    std::mt19937 rng(28);
    for (int i = 0; i < 200000; ++i) {
        // Indices near zero, near the wrap and anywhere, ranges short and long.
        const uint32_t base = i % 3 == 0 ? 0xFFFFFFF0u + rng() % 32 : i % 3 == 1 ? rng() % 32 : rng();
        const uint32_t old_idx = base;
        const uint32_t new_idx = old_idx + (i % 5 == 0 ? rng() : rng() % 70);
        const uint32_t event = old_idx + static_cast<uint32_t>(static_cast<int32_t>(rng() % 200) - 100);
        ASSERT_EQ(vgpu_need_kick(event, new_idx, old_idx) != 0, in_published_range(event, new_idx, old_idx))
            << "event " << event << " new " << new_idx << " old " << old_idx;
    }
}

TEST(PollWindow, GrowsOnEarlyWakeUpsUpToTheCap) {
    PollWindow w = PollWindow::adaptive(200'000);
    EXPECT_EQ(w.ns(), 0u);
    const uint64_t expect[] = {10'000, 20'000, 40'000, 80'000, 160'000, 200'000, 200'000};
    for (uint64_t e : expect) {
        w.woke_after(1'000); // a command came 1 us after the sleep began
        EXPECT_EQ(w.ns(), e);
    }
}

// One pause of the guest's is enough to size the window for the next.
TEST(PollWindow, GrowsAtOnceToCoverTheGapItSaw) {
    PollWindow w = PollWindow::adaptive(20'000'000);
    w.woke_after(10'000'000); // the guest paused 10 ms
    EXPECT_EQ(w.ns(), 12'500'000u);
    w.woke_after(2'000'000); // the window polled 12.5 ms, the command came 2 ms later
    EXPECT_EQ(w.ns(), 20'000'000u) << "capped";
    w.woke_after(30'000'000); // past the cap: shrink
    EXPECT_EQ(w.ns(), 10'000'000u);
}

TEST(PollWindow, ShrinksOnLongIdlesToZero) {
    PollWindow w = PollWindow::adaptive(200'000);
    w.woke_after(150'000);
    ASSERT_EQ(w.ns(), 187'500u);
    w.woke_after(1'000);
    ASSERT_EQ(w.ns(), 200'000u);
    const uint64_t expect[] = {100'000, 50'000, 25'000, 12'500, 0, 0};
    for (uint64_t e : expect) {
        w.woke_after(10'000'000); // 10 ms idle
        EXPECT_EQ(w.ns(), e);
    }
    w.woke_after(PollWindow::kSoonNs); // the wake-up's latency may exceed the cap: still soon
    EXPECT_EQ(w.ns(), 200'000u);
}

TEST(PollWindow, FixedAndZeroCapStayPut) {
    PollWindow f = PollWindow::fixed(50'000);
    f.woke_after(1);
    f.woke_after(1'000'000'000);
    EXPECT_EQ(f.ns(), 50'000u);
    PollWindow z = PollWindow::adaptive(0);
    z.woke_after(1);
    EXPECT_EQ(z.ns(), 0u);
    PollWindow small = PollWindow::adaptive(4'000); // a cap below the start
    small.woke_after(1);
    EXPECT_EQ(small.ns(), 4'000u);
    small.woke_after(2'000'000); // halved below the start: off
    EXPECT_EQ(small.ns(), 0u);
}

} // namespace
} // namespace kvmgpu::vgpu
