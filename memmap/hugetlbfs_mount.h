// Finding a hugetlbfs mount of a given page size through libhugetlbfs, and
// checking it the way kvmtool does (statfs: HUGETLBFS_MAGIC and block size).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "memmap/backing.h"

namespace memmap {

// A usable hugetlbfs mount point for `page`.
struct HugetlbfsMount {
    std::string path;
    // Pages the mount itself still allows (its size= limit); nullopt when
    // the mount has no limit and only the kernel pool counts.
    std::optional<uint64_t> pages_left;
};

// nullopt when libhugetlbfs knows no mount of that size (HUGETLB_PATH, when
// set, restricts the search as libhugetlbfs documents). A mount that
// libhugetlbfs offers but statfs does not confirm is logged and skipped.
std::optional<HugetlbfsMount> find_hugetlbfs_mount(PageSize page);

// An unlinked file on that mount's page size, from
// hugetlbfs_unlinked_fd_for_size. Throws std::system_error on failure.
int open_unlinked_hugetlbfs_file(PageSize page, const std::string& mount_path);

} // namespace memmap
