// The sweep planner: working-set grids, which combinations run, and the
// one-line reasons for everything skipped or capped, on made-up hosts.
#include <gtest/gtest.h>

#include "tlb-study/sweep_plan.h"

using memmap::PageSize;
using tlbstudy::HostResources;
using tlbstudy::plan_sweep;
using tlbstudy::SweepOptions;

namespace {

constexpr uint64_t kKiB = 1ull << 10, kMiB = 1ull << 20, kGiB = 1ull << 30;

// A roomy host: plenty of memory and huge pages of both sizes, KVM.
HostResources roomy() {
    HostResources h;
    h.mem_available = 64 * kGiB;
    h.pool_2m = {true, 8192, 8192};
    h.pool_1g = {true, 16, 16};
    h.kvm = true;
    return h;
}

// Like this 2-core machine and CI: no huge pages, no 1G pool, no KVM.
HostResources bare() {
    HostResources h;
    h.mem_available = 20 * kGiB;
    h.pool_2m = {true, 0, 0};
    h.kvm = false;
    h.kvm_reason = "open /dev/kvm failed: No such file or directory";
    return h;
}

const tlbstudy::NativeRun& native(const tlbstudy::SweepPlan& p, PageSize s) {
    for (const auto& r : p.native)
        if (r.pages == s) return r;
    throw std::logic_error("no native run");
}

const tlbstudy::GuestRun& guest(const tlbstudy::SweepPlan& p, PageSize g, PageSize h) {
    for (const auto& r : p.guest)
        if (r.guest_pages == g && r.host_pages == h) return r;
    throw std::logic_error("no guest run");
}

bool has(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

} // namespace

TEST(SweepPlan, FullGridIsPowersOfTwoFrom4KTo4G) {
    const auto p = plan_sweep({}, roomy());
    ASSERT_EQ(p.working_sets.size(), 21u);
    EXPECT_EQ(p.working_sets.front(), 4 * kKiB);
    EXPECT_EQ(p.working_sets.back(), 4 * kGiB);
    for (size_t i = 1; i < p.working_sets.size(); ++i) EXPECT_EQ(p.working_sets[i], 2 * p.working_sets[i - 1]);
    EXPECT_EQ(p.reps, 5u);
    EXPECT_EQ(p.accesses, 1ull << 20);
    // Every native page size runs the whole grid on a roomy host.
    for (PageSize s : {PageSize::k4K, PageSize::k2M, PageSize::k1G}) {
        EXPECT_TRUE(native(p, s).skip.empty()) << native(p, s).skip;
        EXPECT_EQ(native(p, s).ws.size(), 21u);
    }
    EXPECT_EQ(native(p, PageSize::k2M).buffer_bytes, 4 * kGiB);
    EXPECT_EQ(native(p, PageSize::k1G).buffer_bytes, 4 * kGiB);
}

TEST(SweepPlan, QuickGridIsPowersOfFourTo64M) {
    SweepOptions o;
    o.quick = true;
    const auto p = plan_sweep(o, roomy());
    EXPECT_EQ(p.working_sets, (std::vector<uint64_t>{4 * kKiB, 16 * kKiB, 64 * kKiB, 256 * kKiB, 1 * kMiB, 4 * kMiB,
                                                      16 * kMiB, 64 * kMiB}));
    EXPECT_EQ(p.reps, 3u);
    EXPECT_EQ(p.accesses, 1ull << 17);
    EXPECT_EQ(p.guest_accesses, 1ull << 13);
    // Quick guests stop at 4M.
    EXPECT_EQ(guest(p, PageSize::k4K, PageSize::k4K).ws.back(), 4 * kMiB);
}

TEST(SweepPlan, MaxWsCapsTheGridAtTheLargestStepBelowIt) {
    SweepOptions o;
    o.max_ws = 3 * kMiB;
    const auto p = plan_sweep(o, roomy());
    EXPECT_EQ(p.working_sets.back(), 2 * kMiB);
    o.max_ws = 4 * kKiB;
    EXPECT_EQ(plan_sweep(o, roomy()).working_sets, std::vector<uint64_t>{4 * kKiB});
    o.max_ws = 1000;
    EXPECT_THROW(plan_sweep(o, roomy()), std::invalid_argument);
}

TEST(SweepPlan, NoHugePagesSkipsWithTheReserveCommand) {
    const auto p = plan_sweep({}, bare());
    EXPECT_TRUE(native(p, PageSize::k4K).skip.empty());
    const auto& m2 = native(p, PageSize::k2M);
    EXPECT_TRUE(m2.ws.empty());
    EXPECT_TRUE(has(m2.skip, "no 2 MiB huge pages reserved")) << m2.skip;
    EXPECT_TRUE(has(m2.skip, "echo 2048 > ")) << m2.skip; // 4 GiB of 2 MiB pages
    const auto& g1 = native(p, PageSize::k1G);
    EXPECT_TRUE(has(g1.skip, "no 1 GiB huge-page pool")) << g1.skip;
    EXPECT_EQ(p.backing_pages, std::vector<PageSize>{PageSize::k4K});
    EXPECT_EQ(p.backing_skips.size(), 2u);
}

TEST(SweepPlan, ASmallPoolCapsTheHugeRunsAndSaysSo) {
    HostResources h = roomy();
    h.pool_2m = {true, 10, 10}; // 20 MiB
    const auto p = plan_sweep({}, h);
    const auto& m2 = native(p, PageSize::k2M);
    EXPECT_TRUE(m2.skip.empty());
    EXPECT_EQ(m2.ws.back(), 16 * kMiB);
    EXPECT_EQ(m2.buffer_bytes, 16 * kMiB);
    EXPECT_TRUE(has(m2.note, "above 16M skipped")) << m2.note;
    EXPECT_TRUE(has(m2.note, "10 free pages")) << m2.note;
    // Guests on 2M host pages need their whole RAM from the pool: 10 pages
    // cannot hold even the smallest guest (32 MiB of overhead).
    const auto& g = guest(p, PageSize::k4K, PageSize::k2M);
    EXPECT_TRUE(g.ws.empty());
    EXPECT_TRUE(has(g.skip, "10 free pages")) << g.skip;
}

TEST(SweepPlan, LittleMemoryCapsThe4KRuns) {
    HostResources h = bare();
    h.mem_available = 1 * kGiB; // 3/4 usable
    const auto p = plan_sweep({}, h);
    EXPECT_EQ(native(p, PageSize::k4K).ws.back(), 512 * kMiB);
    EXPECT_TRUE(has(native(p, PageSize::k4K).note, "1024 MiB of memory available")) << native(p, PageSize::k4K).note;
}

TEST(SweepPlan, NoKvmSkipsEveryGuestRunWithTheReason) {
    const auto p = plan_sweep({}, bare());
    EXPECT_TRUE(p.guest.empty());
    EXPECT_TRUE(has(p.guest_skip, "No such file or directory")) << p.guest_skip;
    SweepOptions o;
    o.guest = false;
    EXPECT_TRUE(has(plan_sweep(o, roomy()).guest_skip, "--no-guest"));
}

TEST(SweepPlan, GuestCombinationsAreGuestPagesTimesHostBacking) {
    SweepOptions o;
    o.guest_max_ws = 64 * kMiB;
    HostResources h = roomy();
    h.pool_1g = {true, 0, 0};
    const auto p = plan_sweep(o, h);
    ASSERT_EQ(p.guest.size(), 6u);
    for (const auto& g : p.guest) {
        if (g.host_pages == PageSize::k1G) {
            EXPECT_TRUE(has(g.skip, "no 1 GiB huge pages reserved")) << g.label() << ": " << g.skip;
            continue;
        }
        EXPECT_TRUE(g.skip.empty()) << g.label() << ": " << g.skip;
        EXPECT_EQ(g.ws.back(), 64 * kMiB) << g.label();
        EXPECT_EQ(g.ram_bytes, tlbstudy::guest_ram_for(64 * kMiB, g.host_pages));
    }
    EXPECT_EQ(guest(p, PageSize::k2M, PageSize::k4K).label(), "guest 2M / host 4K");
}

TEST(SweepPlan, GuestWorkingSetsNeverExceedMaxWs) {
    SweepOptions o;
    o.max_ws = 1 * kMiB;
    o.guest_max_ws = 1 * kGiB;
    const auto p = plan_sweep(o, roomy());
    EXPECT_EQ(guest(p, PageSize::k4K, PageSize::k4K).ws.back(), 1 * kMiB);
}

TEST(SweepPlan, GuestRamCoversBufferTablesAndImage) {
    for (uint64_t ws : {4 * kKiB, 1 * kMiB, 256 * kMiB, 4 * kGiB}) {
        for (PageSize hp : {PageSize::k4K, PageSize::k2M, PageSize::k1G}) {
            const uint64_t ram = tlbstudy::guest_ram_for(ws, hp);
            EXPECT_GE(ram, ws + ws / 512 + 16 * kMiB) << ws;
            EXPECT_EQ(ram % std::max<uint64_t>(2 * kMiB, memmap::bytes(hp)), 0u);
        }
    }
    EXPECT_EQ(tlbstudy::guest_ram_for(4 * kKiB, PageSize::k1G), 1 * kGiB);
}

TEST(SweepPlan, SizeLabels) {
    EXPECT_EQ(tlbstudy::size_label(4 * kKiB), "4K");
    EXPECT_EQ(tlbstudy::size_label(64 * kMiB), "64M");
    EXPECT_EQ(tlbstudy::size_label(4 * kGiB), "4G");
    EXPECT_EQ(tlbstudy::size_label(1536 * kKiB), "1536K");
    EXPECT_EQ(tlbstudy::size_label(1000), "1000");
}
