// Host memory that backs a slice of guest RAM: 4 KiB shmem pages (THP
// off), hugetlbfs 2 MiB pages (through libhugetlbfs) or 1 GiB pages. Always a
// MAP_SHARED mapping of a file descriptor that no fork inherits
// (fork_sharing.h): the VM's own GPU worker maps it again from fd(), and no
// other process forked by the VMM sees it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <stdexcept>
#include <string_view>

namespace memmap {

enum class PageSize : uint64_t {
    k4K = 4096ull,
    k2M = 2ull << 20,
    k1G = 1ull << 30,
};

constexpr uint64_t bytes(PageSize p) { return static_cast<uint64_t>(p); }
std::string_view to_string(PageSize p);            // "4K", "2M", "1G"
bool parse_page_size(std::string_view s, PageSize* out); // accepts 4K/2M/1G (any case) or 4096/2097152/1073741824

// Where a Backing's pages came from (the path create() took).
enum class BackingSource {
    Anonymous,        // 4 KiB: a memfd (shmem), THP refused with MADV_NOHUGEPAGE
    Hugetlbfs,        // huge pages: unlinked file on a hugetlbfs mount, MAP_SHARED
    AnonymousHugetlb, // huge pages: no mount of that size, a memfd with MFD_HUGETLB|MFD_HUGE_*
};
std::string_view to_string(BackingSource s); // "anonymous", "hugetlbfs", "MAP_HUGETLB"

struct BackingOptions {
    bool prefault = false; // touch every page at creation (like MAP_POPULATE; see prefault())
};

// Thrown when the host's huge-page pool cannot hold the request. what() is
// one line that names how many pages are missing and the command that
// reserves them.
struct HugePagePoolError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One host mapping. Move-only; unmaps on destruction.
class Backing {
public:
    // Throws std::invalid_argument (size 0 or not a multiple of the page size),
    // HugePagePoolError (pool short), std::system_error (mmap etc., with errno).
    static std::unique_ptr<Backing> create(PageSize page, uint64_t size, BackingOptions opts = {});

    // Another process's backing received as a descriptor (a GPU worker's
    // view of its VM's RAM): maps `fd` MAP_SHARED wherever the kernel puts
    // it and owns the descriptor from then on. The file must hold `size`
    // bytes. Throws std::invalid_argument (size) or std::system_error (fstat,
    // mmap); the descriptor is closed on failure too.
    static std::unique_ptr<Backing> adopt(int fd, PageSize page, uint64_t size, BackingSource source);

    ~Backing();
    Backing(const Backing&) = delete;
    Backing& operator=(const Backing&) = delete;

    uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }
    // The file the pages live in (close-on-exec; owned by this object): what
    // the VM's GPU worker maps again after its fork.
    int fd() const { return fd_; }
    PageSize page_size() const { return page_; }
    // Nanoseconds spent in mmap (+ prefault when asked) at creation.
    uint64_t create_ns() const { return create_ns_; }
    // Touch every page now (one write per page); returns nanoseconds taken.
    // Leaves the contents unchanged, so it is safe on memory in use.
    // Throws std::system_error if the kernel cannot supply the pages.
    uint64_t prefault();

    BackingSource source() const { return source_; }
    // The hugetlbfs mount point used; empty unless source() is Hugetlbfs.
    const std::string& hugetlbfs_mount() const { return mount_; }

private:
    Backing(uint8_t* data, uint64_t size, PageSize page, int fd) : data_(data), size_(size), page_(page), fd_(fd) {}
    uint8_t* data_;
    uint64_t size_;
    PageSize page_;
    int fd_;
    uint64_t create_ns_ = 0;
    BackingSource source_ = BackingSource::Anonymous;
    std::string mount_;
};

} // namespace memmap
