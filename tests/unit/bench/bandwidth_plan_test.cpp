#include "kvmtool-gpu/bench/bandwidth_plan.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include <algorithm>


using namespace kvmgpu::bench;
using memmap::PageSize;

namespace {
size_t count_kind(const BandwidthVm& vm, const std::string& kind) {
    return std::count_if(vm.expected.begin(), vm.expected.end(), [&](const BandwidthKey& k) { return k.kind == kind; });
}
} // namespace

TEST(BandwidthPlan, FullSweepShape) {
    const auto s = full_bandwidth_sweep(false);
    ASSERT_EQ(s.sizes.size(), 10u); // 4K .. 1G in x4 steps
    EXPECT_EQ(s.sizes.front(), 4096u);
    EXPECT_EQ(s.sizes.back(), 1ull << 30);
    EXPECT_EQ(full_bandwidth_sweep(true).host_pages.size(), 3u);
    const auto vms = plan_bandwidth_vms(s);
    ASSERT_EQ(vms.size(), 4u); // {4K,2M} host x {4K,2M} guest
    // Pinned only in the first guest-page VM of each host backing.
    EXPECT_EQ(count_kind(vms[0], "pinned"), 20u);
    EXPECT_EQ(count_kind(vms[1], "pinned"), 0u);
    // 7 strategies; the 4 slow ones stop at 256M (9 sizes), auto, gather and walk reach 1G.
    EXPECT_EQ(count_kind(vms[0], "pageable"), 2u * (4 * 9 + 3 * 10));
    EXPECT_EQ(count_kind(vms[1], "pageable"), count_kind(vms[0], "pageable"));
    // twocopy, like registered, in every VM at every size (no strategy, so no slow_max).
    for (const auto& vm : vms) {
        EXPECT_EQ(count_kind(vm, "twocopy"), 20u);
        EXPECT_EQ(count_kind(vm, "registered"), 20u);
        EXPECT_NE(vm.cmdline.find(",registered,twocopy "), std::string::npos) << vm.cmdline;
    }
    for (const auto& vm : vms)
        for (const auto& k : vm.expected) {
            EXPECT_EQ(k.source, "guest");
            EXPECT_EQ(k.hpages, std::string(memmap::to_string(vm.host_pages)));
            EXPECT_EQ(k.gpages, k.kind == "pinned" ? "-" : vm.guest_pages);
        }
}

TEST(BandwidthPlan, CmdlineCarriesTheSweep) {
    auto s = quick_bandwidth_sweep();
    s.strategies = {"walk", "gather", "auto"};
    s.htod = false;
    const auto vms = plan_bandwidth_vms(s);
    ASSERT_FALSE(vms.empty());
    const std::string& c = vms[0].cmdline;
    EXPECT_NE(c.find("guest_pages=4K"), std::string::npos);
    EXPECT_NE(c.find("sizes=4096,65536,1048576"), std::string::npos);
    EXPECT_NE(c.find("dirs=dtoh "), std::string::npos);
    EXPECT_NE(c.find("kinds=pinned,pageable"), std::string::npos);
    EXPECT_NE(c.find("strategies=walk,gather,auto"), std::string::npos);
    EXPECT_NE(c.find("vgpu_sg_entries="), std::string::npos);
    EXPECT_NE(vms[1].cmdline.find("kinds=pageable,twocopy "), std::string::npos);
    // The guest runs strategies in table order (auto, gather, walk), whatever the list order.
    const auto& e = vms[0].expected;
    auto first = [&](const char* st) {
        return std::find_if(e.begin(), e.end(), [&](const BandwidthKey& k) { return k.strategy == st; }) - e.begin();
    };
    EXPECT_LT(first("auto"), first("gather"));
    EXPECT_LT(first("gather"), first("walk"));
    EXPECT_EQ(std::count_if(e.begin(), e.end(), [](const BandwidthKey& k) { return k.strategy == "walk"; }),
              std::count_if(e.begin(), e.end(), [](const BandwidthKey& k) { return k.strategy == "auto"; }));
    for (const auto& k : e) EXPECT_EQ(k.dir, "dtoh");
}

TEST(BandwidthPlan, UnknownStrategyIsRejected) {
    auto s = quick_bandwidth_sweep();
    s.strategies = {"gather", "teleport"};
    try {
        plan_bandwidth_vms(s);
        ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("auto,gather,walk,perchunk"), std::string::npos) << e.what();
    }
}

TEST(BandwidthPlan, NothingToDo) {
    auto s = quick_bandwidth_sweep();
    s.htod = s.dtoh = false;
    EXPECT_TRUE(plan_bandwidth_vms(s).empty());
    s = quick_bandwidth_sweep();
    s.pinned = false;
    s.strategies.clear();
    EXPECT_FALSE(plan_bandwidth_vms(s).empty()); // twocopy is left
    s.twocopy = false;
    EXPECT_TRUE(plan_bandwidth_vms(s).empty());
}

TEST(BandwidthPlan, RamFitsTheBufferAndTheHostPage) {
    for (PageSize hp : {PageSize::k4K, PageSize::k2M, PageSize::k1G}) {
        for (uint64_t max : {4096ull, 1ull << 20, 256ull << 20, 1ull << 30}) {
            const uint64_t ram = bandwidth_ram_bytes(max, hp, 1u << 20);
            EXPECT_GE(ram, max + (16ull << 20) + (48ull << 20));
            EXPECT_GE(ram, 128ull << 20);
            EXPECT_EQ(ram % std::max<uint64_t>(memmap::bytes(hp), 2ull << 20), 0u);
        }
    }
    EXPECT_EQ(bandwidth_ram_bytes(1ull << 30, PageSize::k1G, 1u << 20), 2ull << 30);
}

TEST(BandwidthPlan, NativeMirrorsSizesAndDirections) {
    auto s = quick_bandwidth_sweep();
    const auto n = plan_native_copies(s);
    EXPECT_EQ(n.size(), 2u * 3u * 2u); // kinds x sizes x dirs
    for (const auto& c : n) {
        EXPECT_EQ(c.key.source, "native");
        EXPECT_GE(c.reps, s.reps_min);
        EXPECT_LE(c.reps, s.reps_max);
    }
    EXPECT_EQ(n.front().key.mode(), "native pageable");
}

TEST(BandwidthPlan, Lists) {
    EXPECT_EQ(split_list("a,,b,"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(size_text(4096), "4K");
    EXPECT_EQ(size_text(1ull << 30), "1G");
    EXPECT_EQ(size_text(3 << 20), "3M");
    EXPECT_EQ(size_text(12345), "12345");
}

TEST(BandwidthPlan, ModeNames) {
    BandwidthKey k{"guest", "htod", "pageable", "4K", "2M", "gather", 4096};
    EXPECT_EQ(k.mode(), "guest pageable gp4K hp2M gather");
    k.kind = "pinned";
    EXPECT_EQ(k.mode(), "guest pinned hp2M");
    EXPECT_EQ((BandwidthKey{"native", "htod", "pinned", "-", "-", "none", 1}).mode(), "native pinned");
}

TEST(BandwidthPlan, TrialsRepeatEveryCellInARow) {
    auto s = quick_bandwidth_sweep();
    const size_t cells = plan_bandwidth_vms(s)[0].expected.size();
    EXPECT_NE(plan_bandwidth_vms(s)[0].cmdline.find(" trials=1"), std::string::npos);
    s.trials = 3;
    const auto vms = plan_bandwidth_vms(s);
    EXPECT_NE(vms[0].cmdline.find(" trials=3"), std::string::npos);
    const auto& e = vms[0].expected;
    ASSERT_EQ(e.size(), 3 * cells); // the count the guest's BW-PLAN must match
    for (size_t i = 0; i < e.size(); ++i) {
        EXPECT_EQ(e[i].trial, i % 3 + 1) << i; // the guest's order: a cell's trials back to back
        EXPECT_EQ(e[i].trials, 3u);
        BandwidthKey cell = e[i], first = e[i - i % 3];
        cell.trial = first.trial = 0;
        EXPECT_EQ(cell, first) << i;
    }
    const auto n = plan_native_copies(s);
    EXPECT_EQ(n.size(), 2u * 3u * 2u); // still one per cell: the native run measures its trials
    for (const auto& c : n) EXPECT_EQ(c.key.trials, 3u);
}

TEST(BandwidthPlan, TrialsOption) {
    EXPECT_EQ(parse_trials("1"), 1u);
    EXPECT_EQ(parse_trials("9"), 9u);
    for (const char* bad : {"0", "10", "", "x", "3x", " 3", "-1", "+3", "2.5", "99999999999999999999"}) {
        try {
            parse_trials(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()), "--trials '" + std::string(bad) + "': expected a whole number from 1 to 9");
        }
    }
}

TEST(BandwidthPlan, RegisteredBuffersAreMeasuredInEveryGuestPageSize) {
    BandwidthSweep s;
    s.sizes = {1 << 20};
    s.host_pages = {memmap::PageSize::k2M};
    s.guest_pages = {"4K", "2M"};
    s.pinned = false, s.pageable = false, s.registered = true;
    const auto vms = plan_bandwidth_vms(s);
    ASSERT_EQ(vms.size(), 2u);
    for (const auto& vm : vms) {
        EXPECT_NE(vm.cmdline.find("kinds=registered"), std::string::npos) << vm.cmdline;
        ASSERT_EQ(vm.expected.size(), 2u); // htod, dtoh
        EXPECT_EQ(vm.expected[0].kind, "registered");
        EXPECT_EQ(vm.expected[0].gpages, vm.guest_pages);
        EXPECT_EQ(vm.expected[0].strategy, "none");
    }
    const auto native = plan_native_copies(s);
    EXPECT_TRUE(std::any_of(native.begin(), native.end(), [](const NativeCopy& n) { return n.key.kind == "registered"; }));
    EXPECT_TRUE(full_bandwidth_sweep(false).registered);
    EXPECT_FALSE(quick_bandwidth_sweep().registered);
}

// GViM's 2-copy: in every guest page size's VM (beside the bounce strategy
// it is read against), after the other kinds as the guest runs them, in
// both sweeps (so CI's quick one boots it), and not natively.
TEST(BandwidthPlan, TwoCopyBuffers) {
    BandwidthSweep s;
    s.sizes = {4096, 1 << 20};
    s.host_pages = {memmap::PageSize::k2M};
    s.guest_pages = {"4K", "2M"};
    s.registered = true;
    s.twocopy = true;
    s.strategies = {"bounce"};
    const auto vms = plan_bandwidth_vms(s);
    ASSERT_EQ(vms.size(), 2u);
    for (const auto& vm : vms) {
        EXPECT_TRUE(vm.twocopy);
        EXPECT_NE(vm.cmdline.find("registered,twocopy strategies=bounce"), std::string::npos) << vm.cmdline;
        ASSERT_EQ(count_kind(vm, "twocopy"), 4u); // 2 sizes x 2 dirs
        const auto first = std::find_if(vm.expected.begin(), vm.expected.end(),
                                        [](const BandwidthKey& k) { return k.kind == "twocopy"; });
        ASSERT_EQ(vm.expected.end() - first, 4); // the guest's last kind
        EXPECT_EQ(first->gpages, vm.guest_pages);
        EXPECT_EQ(first->strategy, "none");
        EXPECT_EQ(first->mode(), "guest twocopy gp" + vm.guest_pages + " hp2M");
    }
    s.pinned = s.pageable = s.registered = false;
    EXPECT_NE(plan_bandwidth_vms(s)[0].cmdline.find(" kinds=twocopy "), std::string::npos);
    for (const auto& n : plan_native_copies(s)) EXPECT_NE(n.key.kind, "twocopy");
    EXPECT_TRUE(full_bandwidth_sweep(false).twocopy);
    EXPECT_TRUE(quick_bandwidth_sweep().twocopy);
    // Its two bounce buffers are in every VM's RAM.
    EXPECT_GE(bandwidth_ram_bytes(1ull << 30, PageSize::k2M, 1u << 20), (1ull << 30) + (72ull << 20));
}

TEST(BandwidthPlan, GvimModes) {
    BandwidthKey k{"guest", "htod", "twocopy", "4K", "2M", "none", 4096};
    EXPECT_EQ(k.gvim_mode(), "2-copy");
    k.kind = "pageable", k.strategy = "bounce";
    EXPECT_EQ(k.gvim_mode(), "1-copy");
    for (const char* st : {"auto", "gather", "walk", "perchunk", "coalesce", "batch"}) {
        k.strategy = st;
        EXPECT_EQ(k.gvim_mode(), "bypass") << st;
    }
    k.strategy = "none";
    for (const char* kind : {"pinned", "registered"}) {
        k.kind = kind;
        EXPECT_EQ(k.gvim_mode(), "bypass") << kind;
    }
    for (const char* kind : {"pinned", "pageable", "registered"})
        EXPECT_EQ((BandwidthKey{"native", "htod", kind, "-", "-", "none", 1}).gvim_mode(), "native") << kind;
}
