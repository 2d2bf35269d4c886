// The sweep of `kvmtool-gpu bench bandwidth`: which VMs to boot (host
// backing x guest page size), what each guest is told to measure (its
// cmdline) and which result lines each owes; and the native measurements
// of the same sizes. Pure: no KVM, no GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>
#include <tuple>

#include "memmap/backing.h"

namespace kvmgpu::bench {

struct BandwidthSweep {
    std::vector<uint64_t> sizes;
    std::vector<memmap::PageSize> host_pages; // backing of guest RAM, one VM each
    std::vector<std::string> guest_pages;     // "4K", "2M": the guest's pageable heap
    bool htod = true, dtoh = true;
    bool pinned = true, pageable = true;      // guest buffer kinds
    bool registered = false;                  // a registered pageable buffer (cuMemHostRegister)
    bool twocopy = false;                     // GViM's 2-copy: the guest's copy into its bounce buffers
    std::vector<std::string> strategies;      // names from kSgStrategies (bandwidth_rules.h)
    uint64_t slow_max = 256ull << 20;         // naive strategies only up to here (0: always)
    uint64_t target = 256ull << 20;           // bytes per measurement, within the rep bounds
    uint64_t reps_min = 2, reps_max = 20;
    uint64_t verify = 64ull << 10;            // guest data check per (kind, strategy)
    uint64_t sg_entries = 1ull << 20;         // guest SG-list pool (16 B each)
    unsigned trials = 1;                      // measurements of each cell, native and guest
};

// The full sweep (4 KiB .. 1 GiB, x4 steps; every strategy, the registered
// and the twocopy kind; 4K and 2M host pages, plus 1G when `pool_1g`) and
// the --quick one (three small sizes, every kind but registered, 4K and 2M
// host pages, reps 1..3) that CI runs under nested emulation.
BandwidthSweep full_bandwidth_sweep(bool pool_1g);
BandwidthSweep quick_bandwidth_sweep();

// Identifies one measurement: trial `trial` (1-based) of `trials` of one
// cell; the cell is the rest of the key. Native ones have kind
// "pinned"/"pageable", gpages and hpages "-" and strategy "none".
struct BandwidthKey {
    std::string source; // "native" or "guest"
    std::string dir;    // "htod", "dtoh"
    std::string kind;   // "pinned", "pageable", "registered", "twocopy"
    std::string gpages; // guest page size of the buffer ("-" for pinned and native)
    std::string hpages; // host backing of guest RAM ("-" for native)
    std::string strategy;
    uint64_t bytes = 0;
    unsigned trial = 1, trials = 1;
    bool operator==(const BandwidthKey&) const = default;
    auto wire() { return std::tie(source, dir, kind, gpages, hpages, strategy, bytes, trial, trials); }
    std::string mode() const; // e.g. "guest pageable gp4K hp2M gather", "native pinned"
    // GViM's name for how the guest's bytes reach the device: "2-copy"
    // (twocopy: the guest's copy, the VMM's, DMA), "1-copy" (the bounce
    // strategy: the VMM's copy, DMA), "bypass" (DMA or GPU reads from guest
    // RAM in place: pinned, registered, every other strategy); "native".
    std::string gvim_mode() const;
};

struct BandwidthVm {
    memmap::PageSize host_pages;
    std::string guest_pages;
    bool pinned = false, pageable = false, registered = false, twocopy = false;
    uint64_t ram_bytes = 0;
    std::string cmdline;               // for the bandwidth guest
    std::vector<BandwidthKey> expected; // the BW lines it owes: every trial of every cell
    std::string label() const;          // "host 2M, guest 4K"
};

// Pinned buffers are measured once per host backing (in the VM of the first
// guest page size): the guest page size does not touch them.
std::vector<BandwidthVm> plan_bandwidth_vms(const BandwidthSweep& s);

// One native cell; key.trials says how many trials to measure (key.trial is 1).
struct NativeCopy {
    BandwidthKey key;
    uint64_t reps = 0;
};
std::vector<NativeCopy> plan_native_copies(const BandwidthSweep& s);

// Guest RAM for buffers of up to max_bytes: the buffer, the page tables,
// the SG pool, twocopy's bounce buffers and the runtime, rounded up to the
// host page.
uint64_t bandwidth_ram_bytes(uint64_t max_bytes, memmap::PageSize host_pages, uint64_t sg_entries);

std::vector<std::string> split_list(const std::string& text);
std::string size_text(uint64_t bytes); // 4096 -> "4K", 1<<30 -> "1G", 12345 -> "12345"
// --trials: "1".."9" (kMaxTrials). Throws std::invalid_argument, one line.
unsigned parse_trials(const std::string& text);

} // namespace kvmgpu::bench
