#include "memmap/hugetlbfs_mount.h"

#include <sys/statfs.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <system_error>

extern "C" { // hugetlbfs.h has no C++ guards of its own
#include <hugetlbfs.h>
}

#include "memmap/memmap_log.h"

// libhugetlbfs fills its table of page sizes and mount points from a
// constructor in init.o. Linked statically, nothing references init.o, so
// that constructor never runs and hugetlbfs_find_path_for_size() would
// always answer NULL. These are the library's own (non-static) setup steps
// that the constructor calls; running them ourselves gives the same table
// without dragging in the rest of init.o (ELF remapping, morecore, shmget).
extern "C" {
void __lh_hugetlbfs_setup_env(void);
void __lh__hugetlbfs_setup_kernel_page_size(void);
void __lh_setup_mounts(void);
extern int __lh___hugetlbfs_verbose;
}

namespace memmap {

namespace {

void setup_libhugetlbfs_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        __lh_hugetlbfs_setup_env(); // reads HUGETLB_VERBOSE, HUGETLB_PATH, ...
        // memmap logs the path it takes itself; libhugetlbfs's own warnings
        // (e.g. no default huge page size) stay quiet unless the operator
        // asked for them.
        if (!std::getenv("HUGETLB_VERBOSE") && !std::getenv("HUGETLB_DEBUG")) __lh___hugetlbfs_verbose = 0;
        __lh__hugetlbfs_setup_kernel_page_size();
        __lh_setup_mounts();
    });
}

} // namespace

std::optional<HugetlbfsMount> find_hugetlbfs_mount(PageSize page) {
    setup_libhugetlbfs_once();
    const char* path = hugetlbfs_find_path_for_size(static_cast<long>(bytes(page)));
    if (!path) return std::nullopt;

    // libhugetlbfs checked this when it scanned /proc/mounts; the mount may
    // have changed since, and a wrong one would silently give 4K pages.
    struct statfs sfs {};
    if (statfs(path, &sfs) != 0) {
        log_line("hugetlbfs mount %s: statfs failed (errno %d), not using it", path, errno);
        return std::nullopt;
    }
    if (static_cast<uint64_t>(sfs.f_type) != HUGETLBFS_MAGIC) {
        log_line("%s is no longer a hugetlbfs mount, not using it", path);
        return std::nullopt;
    }
    if (static_cast<uint64_t>(sfs.f_bsize) != bytes(page)) {
        log_line("hugetlbfs mount %s has %ld-byte pages, not %s, not using it", path,
                 static_cast<long>(sfs.f_bsize), to_string(page).data());
        return std::nullopt;
    }
    HugetlbfsMount m{path, std::nullopt};
    // A mount without size= reports f_blocks == 0 (no limit of its own).
    if (sfs.f_blocks != 0) m.pages_left = static_cast<uint64_t>(sfs.f_bavail);
    return m;
}

int open_unlinked_hugetlbfs_file(PageSize page, const std::string& mount_path) {
    setup_libhugetlbfs_once();
    errno = 0;
    const int fd = hugetlbfs_unlinked_fd_for_size(static_cast<long>(bytes(page)));
    if (fd < 0) {
        throw std::system_error(errno ? errno : EIO, std::generic_category(),
                                "hugetlbfs_unlinked_fd_for_size(" + std::string(to_string(page)) + ") on " +
                                    mount_path);
    }
    return fd;
}

} // namespace memmap
