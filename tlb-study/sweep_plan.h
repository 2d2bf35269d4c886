// The sweep planner: from the options and what the host offers (huge-page
// pools, free memory, /dev/kvm) decide which working sets run on which
// page sizes, natively and in guests, and say in one line why anything is
// skipped or capped. Pure: no system calls, so the tests drive it with any
// host they like (host_resources() reads the real one).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memmap/backing.h"

namespace tlbstudy {

using memmap::PageSize;

// A huge-page pool as the planner sees it.
struct PoolInfo {
    bool exists = false;    // the kernel has a pool of this size
    uint64_t available = 0; // pages a new mapping can still get
    uint64_t total = 0;     // nr_hugepages (for the reserve command)
};

struct HostResources {
    PoolInfo pool_2m, pool_1g;
    uint64_t mem_available = 0; // bytes (MemAvailable)
    bool kvm = false;           // /dev/kvm opened
    std::string kvm_reason;     // why not, when !kvm
};
HostResources host_resources(); // reads /sys, /proc/meminfo; kvm left false

struct SweepOptions {
    bool quick = false;
    uint64_t max_ws = 0;        // 0: 4 GiB (quick: 64 MiB)
    uint64_t guest_max_ws = 0;  // 0: min(max_ws, 1 GiB) (quick: min(max_ws, 4 MiB))
    uint32_t reps = 0;          // 0: 5 (quick: 3)
    uint64_t accesses = 0;      // native, per repetition; 0: 2^20 (quick: 2^17)
    uint64_t guest_accesses = 0;// per repetition; 0: 2^16 (quick: 2^13)
    bool guest = true;          // false: native and VMM parts only
};

// One native buffer: a page size and the working sets it runs (ascending),
// or skip (non-empty) and nothing to run. note: why the list was capped.
struct NativeRun {
    PageSize pages;
    std::vector<uint64_t> ws;
    uint64_t buffer_bytes = 0; // one Backing of this size serves every ws
    std::string skip, note;
};

// One guest combination: guest page size x host backing.
struct GuestRun {
    PageSize guest_pages, host_pages;
    std::vector<uint64_t> ws;
    uint64_t ram_bytes = 0;
    std::string skip, note;
    std::string label() const; // "guest 4K / host 2M"
};

struct SweepPlan {
    std::vector<uint64_t> working_sets; // the grid before per-backing caps
    uint32_t reps = 0;
    uint64_t accesses = 0, guest_accesses = 0;
    std::vector<NativeRun> native;      // 4K, 2M, 1G
    std::vector<GuestRun> guest;        // (4K, 2M) x (4K, 2M, 1G); empty with guest_skip set
    std::string guest_skip;
    std::vector<uint64_t> sg_transfers; // bytes per scatter-gather transfer measured
    uint64_t translate_lookups = 0;
    uint64_t backing_bytes = 0;         // Backing create + prefault sample size
    std::vector<PageSize> backing_pages;
    std::vector<std::string> backing_skips;
};

SweepPlan plan_sweep(const SweepOptions& opts, const HostResources& host);

// Guest RAM for working sets up to max_ws on host pages `host`: the buffer,
// the page tables for a heap of that size, the chase's scratch and the
// image, rounded up to the host page (and at least 2 MiB) size.
uint64_t guest_ram_for(uint64_t max_ws, PageSize host);

// "4K", "64K", "16M", "4G": the largest binary unit that divides bytes.
std::string size_label(uint64_t bytes);

} // namespace tlbstudy
