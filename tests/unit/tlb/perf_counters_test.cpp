// PerfCounterSet: on this host for real (no PMU here and on CI: the
// fallback must say so and give no values; with a PMU the values must be
// plausible), and with perf_event_open replaced to drive each failure.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <linux/perf_event.h> // the fake needs the struct; same ABI as libpfm4's copy

#include "kvmtool-gpu/abi/chase_layout.h"
#include "tlb-study/perf_counters.h"

using tlbstudy::CounterOptions;
using tlbstudy::CounterSpec;
using tlbstudy::PerfCounterSet;

namespace {

const std::string kNoPmu = "no PMU counters on this host: ";

// Fake perf_event_open: fails with g_errno, or (g_errno == 0) hands out a
// memfd holding g_payload, as a counter fd would read.
int g_errno = ENOENT;
int g_calls = 0;
int g_kernel_calls = 0;
bool g_deny_kernel_only = false;
std::vector<uint64_t> g_payload;

int fake_open(perf_event_attr* attr, pid_t, int, int, unsigned long) {
    ++g_calls;
    // exclude_kernel is bit 5 of the flags word that follows config etc.;
    // read it through the struct the library uses.
    const bool kernel = !attr->exclude_kernel;
    if (kernel) ++g_kernel_calls;
    if (g_deny_kernel_only && kernel) {
        errno = EACCES;
        return -1;
    }
    if (g_errno != 0 && !g_deny_kernel_only) {
        errno = g_errno;
        return -1;
    }
    const int fd = memfd_create("fake-counter", MFD_CLOEXEC);
    if (!g_payload.empty()) {
        (void)!write(fd, g_payload.data(), g_payload.size() * 8);
        lseek(fd, 0, SEEK_SET);
    }
    return fd;
}

void reset_fake(int err) {
    g_errno = err;
    g_calls = g_kernel_calls = 0;
    g_deny_kernel_only = false;
    g_payload.clear();
}

CounterOptions fake_options() {
    CounterOptions o;
    o.open = fake_open;
    return o;
}

} // namespace

// Whatever this host has, the answer must be consistent: unavailable with a
// reason and no values, or available with plausible values.
TEST(PerfCounters, ThisHostEitherCountsOrSaysWhyNot) {
    PerfCounterSet set;
    std::vector<uint8_t> buf(64ull << 20);
    std::vector<uint32_t> order(buf.size() / 4096);
    void* p = tlbstudy::build_chase(buf.data(), order.size(), order.data(), 7);
    set.start();
    p = tlbstudy::run_chase(p, 1 << 20);
    set.stop();
    ASSERT_NE(p, nullptr);
    const auto values = set.read();
    if (!set.available()) {
        EXPECT_EQ(set.reason().rfind(kNoPmu, 0), 0u) << set.reason();
        EXPECT_GT(set.reason().size(), kNoPmu.size() + 5) << "the reason must say why";
        EXPECT_TRUE(values.empty()) << "no PMU: no values, never zeros";
        EXPECT_TRUE(set.metrics().empty());
        std::printf("fallback reported: %s\n", set.reason().c_str());
        return;
    }
    // A PMU is present: 2^20 dependent loads over 64 MiB in random page order.
    const auto cycles = tlbstudy::find_value(values, "cycles");
    if (cycles) {
        EXPECT_GT(*cycles, 1u << 20) << "a dependent load takes at least a cycle";
    }
    if (auto m = tlbstudy::find_value(values, "dtlb_load_misses")) {
        EXPECT_GT(*m, 1000u) << "64 MiB in 4 KiB pages is far beyond any dTLB";
        if (cycles) {
            EXPECT_LT(*m, *cycles);
        }
    }
    for (const auto& v : values) EXPECT_FALSE(v.event.empty());
}

TEST(PerfCounters, NoPmuErrnosGiveAReasonAndNoValues) {
    for (int err : {ENOENT, EOPNOTSUPP, ENODEV, EACCES}) {
        reset_fake(err);
        PerfCounterSet set(tlbstudy::default_counter_specs(), fake_options());
        EXPECT_FALSE(set.available()) << err;
        EXPECT_EQ(set.reason().rfind(kNoPmu, 0), 0u) << set.reason();
        EXPECT_NE(set.reason().find(std::strerror(err)), std::string::npos) << set.reason();
        EXPECT_NE(set.reason().find("perf_event_open("), std::string::npos) << set.reason();
        EXPECT_GT(g_calls, 0) << "the syscall must have been tried";
        set.start();
        set.stop();
        EXPECT_TRUE(set.read().empty());
        EXPECT_TRUE(set.metrics().empty());
    }
    reset_fake(EACCES);
    PerfCounterSet denied(tlbstudy::default_counter_specs(), fake_options());
    EXPECT_NE(denied.reason().find("EACCES"), std::string::npos) << denied.reason();
}

TEST(PerfCounters, RingZeroDeniedFallsBackToUserModeAndSaysSo) {
    reset_fake(0);
    g_deny_kernel_only = true;
    g_payload = {42, 100, 50}; // value, time enabled, time running: multiplexed half the time
    PerfCounterSet set({{"cycles", {"perf::CYCLES"}}}, fake_options());
    ASSERT_TRUE(set.available()) << set.reason();
    EXPECT_EQ(g_kernel_calls, 1);
    EXPECT_NE(set.reason().find("user mode only"), std::string::npos) << set.reason();
    const auto v = set.read();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].metric, "cycles");
    EXPECT_EQ(v[0].value, 84u) << "scaled by enabled / running";
    EXPECT_TRUE(v[0].scaled);
}

TEST(PerfCounters, ACounterThatNeverRanHasNoValueRatherThanZero) {
    reset_fake(0);
    g_payload = {0, 100, 0}; // enabled but never on the PMU
    PerfCounterSet set({{"cycles", {"perf::CYCLES"}}}, fake_options());
    ASSERT_TRUE(set.available());
    EXPECT_TRUE(set.read().empty());
}

TEST(PerfCounters, PartialSetsNameWhatIsMissing) {
    reset_fake(0);
    g_payload = {7, 10, 10};
    PerfCounterSet set({{"cycles", {"perf::CYCLES"}}, {"walks", {"NO_SUCH_EVENT_ANYWHERE:XYZ"}}}, fake_options());
    ASSERT_TRUE(set.available());
    EXPECT_EQ(set.metrics(), std::vector<std::string>{"cycles"});
    EXPECT_NE(set.reason().find("walks"), std::string::npos) << set.reason();
    EXPECT_NE(set.reason().find("NO_SUCH_EVENT_ANYWHERE"), std::string::npos) << set.reason();
    ASSERT_EQ(set.describe_events().size(), 1u);
    EXPECT_EQ(set.describe_events()[0], "cycles=perf::CYCLES");
}

TEST(PerfCounters, UnknownEventsOnlyIsUnavailableWithoutTryingTheSyscall) {
    reset_fake(0);
    PerfCounterSet set({{"walks", {"NO_SUCH_EVENT_ANYWHERE:XYZ"}}}, fake_options());
    EXPECT_FALSE(set.available());
    EXPECT_EQ(set.reason().rfind(kNoPmu, 0), 0u) << set.reason();
    EXPECT_EQ(g_calls, 0);
}

TEST(PerfCounters, DefaultSpecsCoverTheStudysMetrics) {
    std::vector<std::string> names;
    for (const auto& s : tlbstudy::default_counter_specs()) {
        names.push_back(s.metric);
        EXPECT_FALSE(s.events.empty()) << s.metric;
    }
    for (const char* want : {"dtlb_load_misses", "dtlb_store_misses", "page_walks_completed", "page_walk_cycles"})
        EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}
