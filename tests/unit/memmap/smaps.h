// Test helper: what the kernel says about the mapping that holds an address
// (/proc/self/smaps), so backing tests check page sizes from the kernel's
// side instead of trusting the code under test.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memmap_test {

struct SmapsEntry {
    uint64_t start = 0, end = 0;
    uint64_t kernel_page_kb = 0; // KernelPageSize
    uint64_t rss_kb = 0;         // Rss (4K and THP pages actually present)
    uint64_t anon_huge_kb = 0;   // AnonHugePages (THP)
    uint64_t hugetlb_kb = 0;     // Private_Hugetlb + Shared_Hugetlb
    std::string vm_flags;        // e.g. "rd wr mr mw me ac sd nh"

    bool has_flag(std::string_view flag) const;
};

std::optional<SmapsEntry> smaps_for(const void* addr);

// True when /proc/mounts lists a hugetlbfs mount whose page size is `bytes`
// and whose size= limit (if any) leaves room for `pages` more pages.
bool hugetlbfs_mount_with_room(uint64_t bytes, uint64_t pages);

} // namespace memmap_test
