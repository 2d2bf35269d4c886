// The VMM's side of address translation, measured on the host with no VM:
// GuestMemory::translate lookups (guest-physical -> host-virtual through the
// region table), scatter-gather lists per transfer (a guest-physically
// scattered 4 KiB list against a 2 MiB list of the same bytes, coalesced
// and translated entry by entry), and the cost of creating and faulting in
// guest RAM per backing page size. cuMemHostRegister is measured by the
// lead on the GPU machine, not here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memmap/backing.h"

namespace tlbstudy {

using memmap::PageSize;

struct TranslateResult {
    uint32_t regions = 0;   // regions in the GuestMemory searched
    uint64_t lookups = 0;   // per repetition
    double ns_per_lookup = 0; // median
    double lookups_per_s() const { return ns_per_lookup > 0 ? 1e9 / ns_per_lookup : 0; }
};

struct SgResult {
    PageSize guest_pages = PageSize::k4K;
    bool shuffled = true;      // frames in random order, like the guest's pageable heap
    uint64_t transfer = 0;     // bytes
    uint64_t entries = 0;      // SG entries the guest sends (one per page frame)
    uint64_t runs = 0;         // host-contiguous runs after coalesce()
    double coalesce_ns = 0;    // median, whole list
    double translate_each_ns = 0;
    std::string label() const; // "4K shuffled"
};

struct BackingResult {
    PageSize pages = PageSize::k4K;
    std::string source;
    uint64_t bytes = 0;
    double create_ms = 0;   // mmap (and checks) only, median
    double prefault_ms = 0; // MADV_POPULATE_WRITE of every page, median
    double touch_ms = 0;    // first write to each 4 KiB of a fresh mapping (demand faults), median
    std::string error;
    double per_gib(double ms) const { return bytes ? ms * double(1ull << 30) / double(bytes) : 0; }
};

// Random 4 KiB-aligned lookups over 1 GiB of guest RAM held in 1 and in 8
// regions (the memory is mapped, never touched).
std::vector<TranslateResult> bench_translate(uint64_t lookups, uint32_t reps, uint64_t seed);

// For each transfer size: 4 KiB frames shuffled, 2 MiB frames shuffled,
// 4 KiB frames in order. Guest RAM is an untouched 4 KiB mapping: the
// VMM's translation does not depend on the host page size. Warm: after one
// unmeasured call per list, with glibc told to keep freed memory (mallopt),
// so the result vectors' first-touch faults stay out of the figures.
std::vector<SgResult> bench_sg(const std::vector<uint64_t>& transfers, uint32_t reps, uint64_t seed);

// Backing::create, prefault() and a demand-fault loop, `reps` times each.
// bytes is rounded up to the page size.
BackingResult bench_backing(PageSize pages, uint64_t bytes, uint32_t reps);

} // namespace tlbstudy
