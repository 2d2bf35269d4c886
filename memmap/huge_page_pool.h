// The host's huge-page pool for one page size, as the kernel reports it in
// /sys/kernel/mm/hugepages/hugepages-<kB>kB/, and the one-line advice that
// tells an operator how to grow it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "memmap/backing.h"

namespace memmap {

// A snapshot of the pool counters (pages, not bytes). It can be stale the
// moment it is read; mmap without MAP_NORESERVE is the real check.
struct HugePagePool {
    uint64_t total = 0;      // nr_hugepages
    uint64_t free = 0;       // free_hugepages (includes pages reserved by others)
    uint64_t reserved = 0;   // resv_hugepages: promised to existing mappings
    uint64_t surplus = 0;    // surplus_hugepages
    uint64_t overcommit = 0; // nr_overcommit_hugepages

    // Pages a new mapping can still reserve: free ones nobody has claimed,
    // plus surplus pages the kernel may still allocate on demand.
    uint64_t available() const;
};

// nullopt when the kernel has no pool of that size (no sysfs directory),
// e.g. 1 GiB pages on a CPU without pdpe1gb. Only for huge sizes.
std::optional<HugePagePool> read_huge_page_pool(PageSize page);

// sysfs directory of the pool, e.g. /sys/kernel/mm/hugepages/hugepages-2048kB.
std::string huge_page_pool_dir(PageSize page);

// The exact shell command that sets the pool to `total_pages`, e.g.
// "echo 256 > /proc/sys/vm/nr_hugepages" (the kernel's default size) or the
// per-size sysfs file otherwise.
std::string reserve_command(PageSize page, uint64_t total_pages);

// One line: how many pages `needed` asks for, how many the pool can give and
// the command that reserves the rest. Used as HugePagePoolError::what().
std::string pool_shortage_message(PageSize page, uint64_t needed, const std::optional<HugePagePool>& pool);

} // namespace memmap
