// Fake device addresses for the host backend, which has no GPU to hand out
// real ones. Each backend instance (one per guest device) leases a slice of
// its own in a window of non-canonical addresses, so two VMs' addresses
// never coincide, and reuses inside it what it frees: a VM that allocates
// and frees forever never runs out, and cannot use up another VM's range.
#pragma once

#include <cstdint>
#include <map>

namespace kvmgpu::vgpu {

// First-fit allocator over [base, base + span): every reservation is
// rounded up to 64 KiB and followed by a 64 KiB guard, so an access that
// runs off one range never lands in the next. Freed space merges with its
// free neighbours. Not thread-safe: owned by one backend.
class FakeAddressRange {
public:
    static constexpr uint64_t kGranule = 64 * 1024;
    FakeAddressRange(uint64_t base, uint64_t span);

    // The first address of `bytes` (> 0); 0 when nothing fits.
    uint64_t reserve(uint64_t bytes);
    // Gives back what reserve returned at `at`; false for anything else.
    bool release(uint64_t at);
    uint64_t base() const { return base_; }
    uint64_t span() const { return span_; }
    uint64_t reserved_ranges() const { return used_.size(); }

private:
    uint64_t base_, span_;
    std::map<uint64_t, uint64_t> free_; // start -> bytes
    std::map<uint64_t, uint64_t> used_; // start -> bytes reserved, guard included
};

// Slice `index()` of every fake window, leased for an instance's life from a
// process-wide pool and returned when it ends. Throws std::runtime_error
// when every slice is leased.
class FakeSliceLease {
public:
    static constexpr unsigned kSlices = 4096;
    static constexpr uint64_t kWindowSpan = 0x0100'0000'0000'0000ull; // 2^56
    static constexpr uint64_t kSliceSpan = kWindowSpan / kSlices;    // 16 TiB

    FakeSliceLease();
    ~FakeSliceLease();
    FakeSliceLease(const FakeSliceLease&) = delete;
    FakeSliceLease& operator=(const FakeSliceLease&) = delete;

    // This lease's slice of the window starting at window_base.
    FakeAddressRange slice_of(uint64_t window_base) const {
        return FakeAddressRange(window_base + uint64_t{index_} * kSliceSpan, kSliceSpan);
    }

private:
    unsigned index_;
};

} // namespace kvmgpu::vgpu
