// Scatter-gather lists of guest-physical ranges, translated and coalesced
// into host ranges for a transfer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "memmap/guest_memory.h"

namespace memmap {

struct GuestRange {
    GuestPhysAddr gpa;
    uint64_t len;
};

// A host-contiguous run: host pointer, its guest-physical start, and length.
// gpa is where the run's first range starts; a run merged across two
// regions whose host mappings happen to abut is not guest-contiguous, so
// use host/len for the copy and gpa only to name where it began.
struct HostRun {
    uint8_t* host;
    GuestPhysAddr gpa;
    uint64_t len;
};

struct SgStats {
    uint64_t entries = 0;      // ranges in
    uint64_t runs = 0;         // host runs out
    uint64_t total_bytes = 0;
};

// Translates every range (each must lie inside guest RAM and be non-empty)
// and merges neighbours that are contiguous in host memory. nullopt if any
// range is invalid or the total overflows. Bounded by ranges.size(). An
// empty list gives an empty vector. stats, when given, is zeroed on failure.
std::optional<std::vector<HostRun>> coalesce(const GuestMemory& mem,
                                             std::span<const GuestRange> ranges,
                                             SgStats* stats = nullptr);

// Same, without merging: one HostRun per range (the per-chunk strategy).
std::optional<std::vector<HostRun>> translate_each(const GuestMemory& mem,
                                                   std::span<const GuestRange> ranges,
                                                   SgStats* stats = nullptr);

} // namespace memmap
