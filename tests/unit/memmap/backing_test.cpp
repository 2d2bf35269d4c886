// Backing: sizes, the three mapping paths, prefaulting, and the one-line pool
// error. Page sizes are checked against /proc/self/smaps, not our own state.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include "memmap/backing.h"
#include "memmap/huge_page_pool.h"
#include "memmap/memmap_log.h"
#include "smaps.h"

using memmap::Backing;
using memmap::BackingSource;
using memmap::HugePagePoolError;
using memmap::PageSize;
using memmap::bytes;

namespace {

constexpr uint64_t kMiB = 1ull << 20;

static_assert(!std::is_copy_constructible_v<Backing>);

std::string human(PageSize p) { return p == PageSize::k1G ? "1 GiB" : "2 MiB"; }

// Skips (never passes silently) when the pool cannot give `pages` pages.
// Returns a reason, or "" when the test can go on.
std::string huge_skip_reason(PageSize p, uint64_t pages) {
    const auto pool = memmap::read_huge_page_pool(p);
    if (!pool) return "this kernel has no " + human(p) + " huge page pool (" + memmap::huge_page_pool_dir(p) + ")";
    if (pool->available() >= pages) return "";
    return "no " + human(p) + " huge pages reserved (" + std::to_string(pool->available()) + " available, " +
           std::to_string(pages) + " needed): " + memmap::reserve_command(p, pool->total + pages);
}

std::vector<std::string> g_log;
void capture(std::string_view line) { g_log.emplace_back(line); }

// ---- 4 KiB -----------------------------------------------------------------

TEST(Backing4K, MapsAlignedZeroedMemoryWithoutTransparentHugePages) {
    // 4 MiB: big and aligned enough that THP could use 2 MiB pages for it.
    auto b = Backing::create(PageSize::k4K, 4 * kMiB, {.prefault = true});
    ASSERT_NE(b->data(), nullptr);
    EXPECT_EQ(b->size(), 4 * kMiB);
    EXPECT_EQ(b->page_size(), PageSize::k4K);
    EXPECT_EQ(b->source(), BackingSource::Anonymous);
    EXPECT_TRUE(b->hugetlbfs_mount().empty());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 4096, 0u);
    for (uint64_t off = 0; off < b->size(); off += 4096) ASSERT_EQ(b->data()[off], 0) << off;

    const auto s = memmap_test::smaps_for(b->data());
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->kernel_page_kb, 4u);
    EXPECT_EQ(s->anon_huge_kb, 0u) << "THP backed a 4K backing";
    EXPECT_TRUE(s->has_flag("nh")) << "MADV_NOHUGEPAGE missing; VmFlags:" << s->vm_flags;
    EXPECT_FALSE(s->has_flag("ht"));
}

TEST(Backing4K, PrefaultOptionPopulatesEveryPage) {
    auto b = Backing::create(PageSize::k4K, 2 * kMiB, {.prefault = true});
    const auto s = memmap_test::smaps_for(b->data());
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->rss_kb, 2048u);
    EXPECT_GT(b->create_ns(), 0u);
}

TEST(Backing4K, LazyUntilPrefaultThenPopulatedAndUnchanged) {
    auto b = Backing::create(PageSize::k4K, 1 * kMiB);
    auto s = memmap_test::smaps_for(b->data());
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->rss_kb, 0u) << "populated without being asked";

    // Data written before prefault() must survive it.
    std::memcpy(b->data() + 4096 * 3 + 7, "guest", 5);
    b->data()[b->size() - 1] = 0x5a;
    const uint64_t ns = b->prefault();
    EXPECT_GT(ns, 0u);
    s = memmap_test::smaps_for(b->data());
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->rss_kb, 1024u);
    EXPECT_EQ(std::memcmp(b->data() + 4096 * 3 + 7, "guest", 5), 0);
    EXPECT_EQ(b->data()[b->size() - 1], 0x5a);
}

TEST(Backing4K, WritesAreVisibleThroughData) {
    auto b = Backing::create(PageSize::k4K, 3 * 4096);
    for (uint64_t i = 0; i < b->size(); ++i) b->data()[i] = static_cast<uint8_t>(i * 7);
    for (uint64_t i = 0; i < b->size(); ++i) ASSERT_EQ(b->data()[i], static_cast<uint8_t>(i * 7));
}

// ---- sizes -------------------------------------------------------------------

void expect_bad_size(PageSize p, uint64_t size) {
    try {
        Backing::create(p, size);
        ADD_FAILURE() << "size " << size << " accepted for " << memmap::to_string(p);
    } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(std::to_string(size)), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::to_string(bytes(p))), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
}

TEST(BackingSize, ZeroAndNonMultiplesAreRefusedNamingBothValues) {
    expect_bad_size(PageSize::k4K, 0);
    expect_bad_size(PageSize::k4K, 4095);
    expect_bad_size(PageSize::k4K, 4097);
    expect_bad_size(PageSize::k4K, 4096 * 5 + 1);
    // Checked before the pool: a bad size is invalid_argument even when the
    // host has no huge pages at all.
    expect_bad_size(PageSize::k2M, 4096);
    expect_bad_size(PageSize::k2M, 0);
    expect_bad_size(PageSize::k2M, 3 * kMiB);
    expect_bad_size(PageSize::k1G, 2 * kMiB);
}

// ---- huge pages ----------------------------------------------------------------

void check_huge_backing(PageSize p, uint64_t pages) {
    const std::string reason = huge_skip_reason(p, pages);
    if (!reason.empty()) GTEST_SKIP() << reason;

    const uint64_t size = pages * bytes(p);
    const auto before = memmap::read_huge_page_pool(p);
    ASSERT_TRUE(before.has_value());
    g_log.clear();
    memmap::set_log_sink(capture);
    auto b = Backing::create(p, size);
    memmap::set_log_sink(nullptr);

    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % bytes(p), 0u) << "not aligned to the page size";
    EXPECT_EQ(b->size(), size);
    // The pages are reserved at mmap time (no MAP_NORESERVE), so the pool
    // shrank before anything was touched.
    const auto after = memmap::read_huge_page_pool(p);
    ASSERT_TRUE(after.has_value());
    EXPECT_EQ(before->available() - after->available(), pages);

    // libhugetlbfs uses the first mount of that size it finds; this assumes
    // at most one, as hosts normally have.
    const bool mounted = memmap_test::hugetlbfs_mount_with_room(bytes(p), pages);
    EXPECT_EQ(b->source(), mounted ? BackingSource::Hugetlbfs : BackingSource::AnonymousHugetlb);
    EXPECT_EQ(b->hugetlbfs_mount().empty(), !mounted);
    // One line saying which path was taken (a fallback adds one saying why).
    ASSERT_FALSE(g_log.empty());
    EXPECT_NE(g_log.back().find(mounted ? "hugetlbfs at" : "MAP_HUGETLB"), std::string::npos) << g_log.back();

    // Touch both ends of every page, then read back.
    for (uint64_t i = 0; i < pages; ++i) {
        b->data()[i * bytes(p)] = static_cast<uint8_t>(i + 1);
        b->data()[(i + 1) * bytes(p) - 1] = static_cast<uint8_t>(0xa0 + i);
    }
    for (uint64_t i = 0; i < pages; ++i) {
        EXPECT_EQ(b->data()[i * bytes(p)], static_cast<uint8_t>(i + 1));
        EXPECT_EQ(b->data()[(i + 1) * bytes(p) - 1], static_cast<uint8_t>(0xa0 + i));
    }

    const auto s = memmap_test::smaps_for(b->data());
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->kernel_page_kb, bytes(p) / 1024) << "not backed by " << human(p) << " pages";
    EXPECT_TRUE(s->has_flag("ht")) << "VmFlags:" << s->vm_flags;
    EXPECT_EQ(s->hugetlb_kb, size / 1024);
}

TEST(BackingHuge, TwoMiBPagesAreAlignedReservedAndReallyHuge) { check_huge_backing(PageSize::k2M, 4); }
TEST(BackingHuge, OneGiBPageIsAlignedReservedAndReallyHuge) { check_huge_backing(PageSize::k1G, 1); }

TEST(BackingHuge, PrefaultedTwoMiBBackingIsResident) {
    const std::string reason = huge_skip_reason(PageSize::k2M, 2);
    if (!reason.empty()) GTEST_SKIP() << reason;
    auto b = Backing::create(PageSize::k2M, 2 * bytes(PageSize::k2M), {.prefault = true});
    const auto s = memmap_test::smaps_for(b->data());
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->hugetlb_kb, 4096u);
}

// Asks for one page more than the pool can give: must fail before mapping,
// with one line that names the count and the command to fix it.
void expect_pool_error(PageSize p) {
    const auto pool = memmap::read_huge_page_pool(p);
    const uint64_t needed = (pool ? pool->available() : 0) + 1;
    try {
        Backing::create(p, needed * bytes(p));
        ADD_FAILURE() << "no HugePagePoolError for " << needed << " pages";
    } catch (const HugePagePoolError& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::to_string(needed) + " huge pages"), std::string::npos) << msg;
        if (pool) {
            EXPECT_NE(msg.find("nr_hugepages"), std::string::npos) << msg;
            EXPECT_NE(msg.find("echo " + std::to_string(pool->total + 1) + " > "), std::string::npos) << msg;
        } else {
            EXPECT_NE(msg.find(memmap::huge_page_pool_dir(p)), std::string::npos) << msg;
        }
    }
}

TEST(BackingHuge, TooManyTwoMiBPagesThrowsPoolErrorWithCommand) { expect_pool_error(PageSize::k2M); }
TEST(BackingHuge, TooManyOneGiBPagesThrowsPoolError) { expect_pool_error(PageSize::k1G); }

TEST(BackingHuge, PoolErrorCommandForDefaultSizeUsesProcSys) {
    // /proc/sys/vm/nr_hugepages controls only the default size's pool.
    std::ifstream meminfo("/proc/meminfo");
    std::string key, default_kb;
    while (meminfo >> key && key != "Hugepagesize:") std::getline(meminfo, default_kb);
    meminfo >> default_kb;
    if (default_kb != "2048") GTEST_SKIP() << "default huge page size is not 2 MiB here (" << default_kb << " kB)";
    const std::string msg = memmap::pool_shortage_message(PageSize::k2M, 256, memmap::HugePagePool{});
    EXPECT_NE(msg.find("256 huge pages of 2 MiB needed, 0 available"), std::string::npos) << msg;
    EXPECT_NE(msg.find("echo 256 > /proc/sys/vm/nr_hugepages"), std::string::npos) << msg;
    const std::string msg1g = memmap::pool_shortage_message(PageSize::k1G, 2, memmap::HugePagePool{.total = 1});
    EXPECT_NE(msg1g.find("echo 3 > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"), std::string::npos)
        << msg1g;
}

TEST(HugePagePool, AvailableSubtractsReservationsAndAddsOvercommit) {
    memmap::HugePagePool p{.total = 10, .free = 6, .reserved = 4, .surplus = 1, .overcommit = 3};
    EXPECT_EQ(p.available(), 2u + 2u);
    p.reserved = 9; // more reserved than free cannot go negative
    p.overcommit = 0;
    EXPECT_EQ(p.available(), 0u);
}

TEST(BackingSourceName, NamesEachPath) {
    EXPECT_EQ(memmap::to_string(BackingSource::Anonymous), "anonymous");
    EXPECT_EQ(memmap::to_string(BackingSource::Hugetlbfs), "hugetlbfs");
    EXPECT_EQ(memmap::to_string(BackingSource::AnonymousHugetlb), "MAP_HUGETLB");
}

} // namespace
