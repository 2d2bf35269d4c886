// LazyRegistration: which gaps get registered, and where copies are cut.
#include "kvmtool-gpu/devices/vgpu/backends/lazy_registration.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace kvmgpu::vgpu {
namespace {

constexpr uint64_t kG = LazyRegistration::kGranule;

struct Recorder {
    uint8_t* base;
    std::vector<std::pair<uint64_t, uint64_t>> calls; // offset, bytes
    vgpu_status answer = VGPU_SUCCESS;
    LazyRegistration::RegisterFn fn() {
        return [this](uint8_t* p, uint64_t n) {
            calls.emplace_back(static_cast<uint64_t>(p - base), n);
            return answer;
        };
    }
};

std::vector<std::pair<uint64_t, uint64_t>> pieces(const LazyRegistration& l, const uint8_t* p, uint64_t bytes) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    l.for_each_piece(p, bytes, [&](uint64_t off, uint64_t len) { out.emplace_back(off, len); });
    return out;
}

// A fake region: only addresses are used, never the bytes.
uint8_t* fake_base() { return reinterpret_cast<uint8_t*>(uintptr_t{1} << 40); }

TEST(LazyRegistration, RegistersTheGranulesARangeTouchesOnce) {
    LazyRegistration l;
    Recorder rec{fake_base(), {}};
    l.add_region(rec.base, 64 * kG);
    ASSERT_EQ(l.prepare(rec.base + kG + 10, 100, rec.fn()), VGPU_SUCCESS);
    ASSERT_EQ(rec.calls.size(), 1u);
    EXPECT_EQ(rec.calls[0], std::make_pair(kG, kG));
    EXPECT_EQ(l.registered_bytes(), kG);
    ASSERT_EQ(l.prepare(rec.base + kG, kG, rec.fn()), VGPU_SUCCESS);
    EXPECT_EQ(rec.calls.size(), 1u) << "already registered: nothing new";
}

TEST(LazyRegistration, FillsOnlyTheGapsAndCutsCopiesWhereRegistrationsMeet) {
    LazyRegistration l;
    Recorder rec{fake_base(), {}};
    l.add_region(rec.base, 64 * kG);
    ASSERT_EQ(l.prepare(rec.base + 2 * kG, kG, rec.fn()), VGPU_SUCCESS);
    ASSERT_EQ(l.prepare(rec.base + 5 * kG, 2 * kG, rec.fn()), VGPU_SUCCESS);
    rec.calls.clear();
    // [1G, 8G): gaps [1,2), [3,5), [7,8) are new.
    ASSERT_EQ(l.prepare(rec.base + kG, 7 * kG, rec.fn()), VGPU_SUCCESS);
    const std::vector<std::pair<uint64_t, uint64_t>> want = {{kG, kG}, {3 * kG, 2 * kG}, {7 * kG, kG}};
    EXPECT_EQ(rec.calls, want);
    EXPECT_EQ(l.registered_bytes(), 7 * kG);
    // A copy over them: one piece per registration, in order, summing to the copy.
    const auto got = pieces(l, rec.base + kG + 5, 6 * kG);
    const std::vector<std::pair<uint64_t, uint64_t>> cut = {
        {0, kG - 5}, {kG - 5, kG}, {2 * kG - 5, 2 * kG}, {4 * kG - 5, 2 * kG}, {6 * kG - 5, 5}};
    EXPECT_EQ(got, cut);
}

// A graph's copy node needs its host range in one registration: those it
// meets are undone and one is made over them and the gaps.
TEST(LazyRegistration, PrepareAsOneMergesWhatARangeMeets) {
    LazyRegistration l;
    Recorder made{fake_base(), {}}, dropped{fake_base(), {}};
    l.add_region(made.base, 64 * kG);
    ASSERT_EQ(l.prepare(made.base + 2 * kG, kG, made.fn()), VGPU_SUCCESS);
    ASSERT_EQ(l.prepare(made.base + 5 * kG, 2 * kG, made.fn()), VGPU_SUCCESS);
    ASSERT_EQ(l.prepare(made.base + 20 * kG, kG, made.fn()), VGPU_SUCCESS);
    made.calls.clear();
    // Inside one registration already: nothing changes.
    ASSERT_EQ(l.prepare_as_one(made.base + 5 * kG + 7, kG, made.fn(), dropped.fn()), VGPU_SUCCESS);
    EXPECT_TRUE(made.calls.empty() && dropped.calls.empty());
    // [2G + 100, 6G): meets [2,3) and [5,7); one registration [2, 7) replaces them.
    ASSERT_EQ(l.prepare_as_one(made.base + 2 * kG + 100, 4 * kG - 100, made.fn(), dropped.fn()), VGPU_SUCCESS);
    const std::vector<std::pair<uint64_t, uint64_t>> gone = {{2 * kG, kG}, {5 * kG, 2 * kG}};
    EXPECT_EQ(dropped.calls, gone);
    const std::vector<std::pair<uint64_t, uint64_t>> one = {{2 * kG, 5 * kG}};
    EXPECT_EQ(made.calls, one);
    EXPECT_EQ(l.registered_bytes(), 6 * kG);
    EXPECT_EQ(pieces(l, made.base + 2 * kG, 5 * kG).size(), 1u);
    // A range in no registration: one, rounded out to granules.
    made.calls.clear(), dropped.calls.clear();
    ASSERT_EQ(l.prepare_as_one(made.base + 30 * kG + 1, 3 * kG, made.fn(), dropped.fn()), VGPU_SUCCESS);
    EXPECT_TRUE(dropped.calls.empty());
    EXPECT_EQ(made.calls, (std::vector<std::pair<uint64_t, uint64_t>>{{30 * kG, 4 * kG}}));
    // A registration ending inside the rounded-out start is taken in too.
    made.calls.clear(), dropped.calls.clear();
    ASSERT_EQ(l.prepare(made.base + 40 * kG, 1, made.fn()), VGPU_SUCCESS);
    made.calls.clear();
    ASSERT_EQ(l.prepare_as_one(made.base + 40 * kG + kG / 2, 2 * kG, made.fn(), dropped.fn()), VGPU_SUCCESS);
    EXPECT_EQ(dropped.calls, (std::vector<std::pair<uint64_t, uint64_t>>{{40 * kG, kG}}));
    EXPECT_EQ(made.calls, (std::vector<std::pair<uint64_t, uint64_t>>{{40 * kG, 3 * kG}}));
}

TEST(LazyRegistration, ClipsToTheRegionAndLeavesOtherMemoryAlone) {
    LazyRegistration l;
    Recorder rec{fake_base(), {}};
    const uint64_t size = 3 * kG + 4096; // not a whole number of granules
    l.add_region(rec.base, size);
    ASSERT_EQ(l.prepare(rec.base + size - 10, 10, rec.fn()), VGPU_SUCCESS);
    ASSERT_EQ(rec.calls.size(), 1u);
    EXPECT_EQ(rec.calls[0], std::make_pair(3 * kG, uint64_t{4096}));
    // Past the region, or spanning out of it: not this object's memory.
    EXPECT_EQ(l.prepare(rec.base + size, 10, rec.fn()), VGPU_SUCCESS);
    EXPECT_EQ(l.prepare(rec.base + size - 10, 20, rec.fn()), VGPU_SUCCESS);
    EXPECT_EQ(rec.calls.size(), 1u);
    EXPECT_EQ(pieces(l, rec.base + size, 100), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 100}}));
}

TEST(LazyRegistration, AFailedRegistrationIsNotRecorded) {
    LazyRegistration l;
    Recorder rec{fake_base(), {}};
    l.add_region(rec.base, 8 * kG);
    rec.answer = VGPU_ERROR_OUT_OF_MEMORY;
    EXPECT_EQ(l.prepare(rec.base, 1, rec.fn()), VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(l.registered_bytes(), 0u);
    EXPECT_TRUE(l.registrations().empty());
    rec.answer = VGPU_SUCCESS;
    EXPECT_EQ(l.prepare(rec.base, 1, rec.fn()), VGPU_SUCCESS);
    EXPECT_EQ(l.registered_bytes(), kG);
}

TEST(LazyRegistration, PrepareAllCompletesEveryRegionAndForgetKeepsTheRegions) {
    LazyRegistration l;
    Recorder rec{fake_base(), {}};
    l.add_region(rec.base, 4 * kG);
    l.add_region(rec.base + 16 * kG, kG);
    ASSERT_EQ(l.prepare(rec.base + kG, kG, rec.fn()), VGPU_SUCCESS);
    ASSERT_EQ(l.prepare_all(rec.fn()), VGPU_SUCCESS);
    EXPECT_EQ(l.registered_bytes(), 5 * kG);
    EXPECT_EQ(l.registrations().size(), 4u); // [1,2) first, then [0,1), [2,4) and the second region
    EXPECT_TRUE(l.is_region(rec.base + 16 * kG));
    l.forget_registrations();
    EXPECT_EQ(l.registered_bytes(), 0u);
    EXPECT_TRUE(l.registrations().empty());
    EXPECT_TRUE(l.is_region(rec.base));
}

} // namespace
} // namespace kvmgpu::vgpu
