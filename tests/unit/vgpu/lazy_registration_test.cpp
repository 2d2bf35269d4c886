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
