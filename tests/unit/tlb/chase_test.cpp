// The shared chase layout (one cycle through every page), the native runner
// on 4 KiB pages, the guest's CHASE line parser and command line, and the
// report writers on a made-up result.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <vector>

#include "kvmtool-gpu/abi/chase_layout.h"
#include "tlb-study/guest_chase.h"
#include "tlb-study/native_chase.h"
#include "tlb-study/report.h"

using namespace tlbstudy;

namespace {
constexpr uint64_t kKiB = 1ull << 10, kMiB = 1ull << 20;
}

TEST(ChaseLayout, OneCycleThroughEveryPageAtALineOffset) {
    for (uint64_t nodes : {1ull, 2ull, 3ull, 64ull, 1000ull}) {
        std::vector<uint8_t> buf(nodes * kChaseNodeStride);
        std::vector<uint32_t> order(nodes);
        void* start = build_chase(buf.data(), nodes, order.data(), 42);
        std::set<uint64_t> pages;
        void* p = start;
        for (uint64_t i = 0; i < nodes; ++i) {
            const uint64_t off = static_cast<uint8_t*>(p) - buf.data();
            ASSERT_LT(off, buf.size());
            EXPECT_EQ(off % kChaseLineBytes, 0u);
            EXPECT_EQ(off % kChaseNodeStride, chase_line_offset(off / kChaseNodeStride));
            pages.insert(off / kChaseNodeStride);
            p = *static_cast<void**>(p);
        }
        EXPECT_EQ(pages.size(), nodes) << "every page once";
        EXPECT_EQ(p, start) << "and back to the start: one cycle";
    }
}

TEST(ChaseLayout, SameSeedSameCycleDifferentSeedDifferentCycle) {
    const uint64_t nodes = 256;
    std::vector<uint8_t> a(nodes * kChaseNodeStride), b(a.size()), c(a.size());
    std::vector<uint32_t> order(nodes);
    build_chase(a.data(), nodes, order.data(), 5);
    build_chase(b.data(), nodes, order.data(), 5);
    build_chase(c.data(), nodes, order.data(), 6);
    auto walk = [&](std::vector<uint8_t>& buf, uint8_t* first) {
        std::vector<uint64_t> seq;
        void* p = first;
        for (uint64_t i = 0; i < nodes; ++i) {
            seq.push_back(static_cast<uint8_t*>(p) - buf.data());
            p = *static_cast<void**>(p);
        }
        return seq;
    };
    // Walk each from page 0's node (positions relative to each buffer).
    const auto sa = walk(a, a.data() + chase_line_offset(0));
    const auto sb = walk(b, b.data() + chase_line_offset(0));
    const auto sc = walk(c, c.data() + chase_line_offset(0));
    EXPECT_EQ(sa, sb);
    EXPECT_NE(sa, sc);
    EXPECT_EQ(chase_accesses_rounded(5), 8u);
    EXPECT_EQ(chase_nodes(100), 1u);
}

TEST(NativeChase, RunsEveryWorkingSetOn4KPages) {
    NativeRun run{memmap::PageSize::k4K, {4 * kKiB, 64 * kKiB, 1 * kMiB}, 1 * kMiB};
    std::vector<std::string> lines;
    const auto r = run_native_sweep({run}, {3, 4096, 1}, nullptr, [&](const std::string& l) { lines.push_back(l); }).at(0);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.source, "anonymous");
    ASSERT_EQ(r.points.size(), 3u);
    for (const auto& pt : r.points) {
        EXPECT_GT(pt.ns_per_access, 0.0);
        EXPECT_LE(pt.ns_min, pt.ns_per_access);
        EXPECT_EQ(pt.accesses, 4096u);
        EXPECT_TRUE(pt.counters.empty());
    }
    EXPECT_EQ(lines.size(), 3u);
}

TEST(NativeChase, SweepRunsPageSizesSideBySideAndKeepsGoingPastAFailedOne) {
    // The 2M run asks for 3 MiB, not a multiple of its page: its Backing
    // cannot be made on any host, and the 4K run must still complete.
    std::vector<NativeRun> runs = {{memmap::PageSize::k4K, {4 * kKiB, 256 * kKiB}, 256 * kKiB},
                                   {memmap::PageSize::k2M, {4 * kKiB}, 3 * kMiB},
                                   {memmap::PageSize::k1G, {}, 0, "skipped: no pool"}};
    const auto r = run_native_sweep(runs, {2, 1024, 3}, nullptr, nullptr);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].points.size(), 2u);
    EXPECT_TRUE(r[0].error.empty()) << r[0].error;
    EXPECT_FALSE(r[1].error.empty());
    EXPECT_TRUE(r[1].points.empty());
    EXPECT_EQ(r[2].skip, "skipped: no pool");
}

TEST(NativeChase, SkippedRunsDoNothing) {
    NativeRun run{memmap::PageSize::k2M, {}, 0, "skipped: no 2 MiB huge pages reserved"};
    const auto r = run_native_sweep({run}, {}, nullptr, nullptr).at(0);
    EXPECT_TRUE(r.points.empty());
    EXPECT_EQ(r.skip, run.skip);
}

TEST(ChaseLine, ParsesTheGuestsLine) {
    const auto c = parse_chase_line(
        "CHASE ws=1048576 pages=2M nodes=256 accesses=8192 reps=3 tsc=2000000 tsc_min=1900000 tsc_khz=2000000");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->ws, 1 * kMiB);
    EXPECT_EQ(c->pages, "2M");
    EXPECT_EQ(c->nodes, 256u);
    EXPECT_EQ(c->reps, 3u);
    // 2e6 ticks at 2 GHz = 1 ms over 8192 accesses.
    EXPECT_NEAR(c->ns_per_access(), 1e6 / 8192, 1e-6);
    EXPECT_NEAR(c->ns_min_per_access(), 0.95e6 / 8192, 1e-6);
}

TEST(ChaseLine, RefusesAnythingElse) {
    EXPECT_FALSE(parse_chase_line("pointer_chase: 5 working sets"));
    EXPECT_FALSE(parse_chase_line("CHASE-DONE sets=5"));
    EXPECT_FALSE(parse_chase_line("CHASE ws=4096 accesses=8 tsc=1"));                 // no tsc_khz
    EXPECT_FALSE(parse_chase_line("CHASE ws=4096 accesses=8 tsc=1 tsc_khz=0"));       // zero frequency
    EXPECT_FALSE(parse_chase_line("CHASE ws=4x96 accesses=8 tsc=1 tsc_khz=1"));       // junk
    EXPECT_FALSE(parse_chase_line("CHASE ws=99999999999999999999999 accesses=8 tsc=1 tsc_khz=1")); // overflow
    EXPECT_FALSE(parse_chase_line("CHASE ws=4096 accesses tsc=1 tsc_khz=1"));         // no '='
    // Unknown keys and extra spaces are fine.
    EXPECT_TRUE(parse_chase_line("CHASE  tsc_khz=1 ws=4096 future=7 accesses=8 tsc=1 "));
}

TEST(GuestChase, CommandLineCarriesTheRun) {
    GuestRun run{memmap::PageSize::k2M, memmap::PageSize::k4K, {4 * kKiB, 1 * kMiB}, 64 * kMiB};
    GuestChaseParams p;
    p.accesses = 8192;
    p.reps = 3;
    p.seed = 9;
    EXPECT_EQ(guest_cmdline(run, p), "guest_pages=2M chase_ws=4K,1M chase_accesses=8192 chase_reps=3 chase_seed=9");
}

TEST(Report, WritesOnlyWhatWasMeasured) {
    StudyResults r;
    r.machine.date_utc = "2026-11-22T00:00:00Z";
    r.machine.pmu = false;
    r.machine.pmu_note = "no PMU counters on this host: test";
    r.plan.working_sets = {4 * kKiB, 8 * kKiB};
    r.plan.reps = 3;
    r.plan.guest_skip = "guest runs skipped: no /dev/kvm";
    NativeChaseResult n;
    n.pages = memmap::PageSize::k4K;
    n.source = "anonymous";
    n.points.push_back({4 * kKiB, 1024, 3, 1.5, 1.25, {}});
    r.native.push_back(n);
    NativeChaseResult skipped;
    skipped.pages = memmap::PageSize::k2M;
    skipped.skip = "skipped: no 2 MiB huge pages reserved";
    r.native.push_back(skipped);
    r.translate.push_back({1, 1000, 5.0});
    r.sg.push_back({memmap::PageSize::k4K, true, 1 * kMiB, 256, 250, 1000, 800});

    std::ostringstream csv, json, md;
    write_csv(r, csv);
    write_json(r, json);
    write_markdown(r, md);
    EXPECT_EQ(csv.str().rfind("section,label,guest_pages,host_pages,bytes,metric,value,unit,emulated\n", 0), 0u);
    EXPECT_NE(csv.str().find("native_chase,native 4K,,4K,4096,ns_per_access,1.5,ns,0"), std::string::npos) << csv.str();
    EXPECT_EQ(csv.str().find("_per_access,0"), std::string::npos) << "no counter rows without a PMU";
    EXPECT_EQ(csv.str().find("guest_chase"), std::string::npos);
    EXPECT_NE(json.str().find("\"pmu\": false"), std::string::npos);
    EXPECT_NE(json.str().find("no PMU counters on this host: test"), std::string::npos);
    EXPECT_NE(md.str().find("| 4K | 1.50 |"), std::string::npos) << md.str();
    EXPECT_NE(md.str().find("skipped: no 2 MiB huge pages reserved"), std::string::npos);
    EXPECT_NE(md.str().find("guest runs skipped: no /dev/kvm"), std::string::npos);
    EXPECT_NE(md.str().find("| 4K shuffled | 1M | 256 | 250 |"), std::string::npos) << md.str();
}

TEST(Report, EmulatedGuestFiguresAreLabelledAsSuch) {
    StudyResults r;
    r.machine.kvm = true;
    r.machine.guest_code_emulated = true;
    r.machine.kvm_flavor = "KVM (pvm: guest code runs in KVM's instruction emulator)";
    r.plan.working_sets = {4 * kKiB};
    GuestChaseResult g;
    g.run = {memmap::PageSize::k4K, memmap::PageSize::k2M, {4 * kKiB}, 64 * kMiB};
    g.ok = true;
    g.lines.push_back(*parse_chase_line("CHASE ws=4096 accesses=100 tsc=100000 tsc_khz=1000000 reps=1"));
    r.guest.push_back(g);
    std::ostringstream csv, md, json;
    write_csv(r, csv);
    write_markdown(r, md);
    write_json(r, json);
    EXPECT_NE(csv.str().find("guest_chase,guest 4K / host 2M,4K,2M,4096,ns_per_access,1000,ns,1"), std::string::npos)
        << csv.str();
    EXPECT_NE(md.str().find("NOT a TLB cost"), std::string::npos) << md.str();
    EXPECT_NE(json.str().find("\"guest_code_emulated\": true"), std::string::npos);
}
