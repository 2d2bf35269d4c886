// Backing::create: the three ways of getting host memory for guest RAM, and
// the checks that make a short huge-page pool fail loudly at setup rather
// than as a SIGBUS when the guest first touches a page.
#include "memmap/backing.h"

#include <sys/mman.h>
#include <linux/mman.h> // MAP_HUGE_2MB, MAP_HUGE_1GB
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "memmap/fork_sharing.h"
#include "memmap/huge_page_pool.h"
#include "memmap/hugetlbfs_mount.h"
#include "memmap/memmap_log.h"

namespace memmap {

namespace {

uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

[[noreturn]] void throw_errno(int err, const std::string& what) {
    throw std::system_error(err, std::generic_category(), what);
}

std::string size_text(uint64_t size) {
    if (size % (1ull << 30) == 0) return std::to_string(size >> 30) + " GiB";
    if (size % (1ull << 20) == 0) return std::to_string(size >> 20) + " MiB";
    return std::to_string(size) + " bytes";
}

void check_size(PageSize page, uint64_t size) {
    if (size != 0 && size % bytes(page) == 0) return;
    throw std::invalid_argument("backing size " + std::to_string(size) +
                                " is not a positive multiple of the page size " +
                                std::to_string(bytes(page)) + " (" + std::string(to_string(page)) + ")");
}

// Fails before any mapping is made, with the command that fixes it.
void check_pool(PageSize page, uint64_t pages) {
    const auto pool = read_huge_page_pool(page);
    if (!pool || pool->available() < pages) throw HugePagePoolError(pool_shortage_message(page, pages, pool));
}

// A huge mapping failing with ENOMEM means the pool ran short between our
// check and the kernel's reservation (another process took pages).
[[noreturn]] void throw_huge_mmap_error(int err, PageSize page, uint64_t pages, const char* call) {
    if (err == ENOMEM) throw HugePagePoolError(pool_shortage_message(page, pages, read_huge_page_pool(page)));
    throw_errno(err, call);
}

// Every path maps guest RAM MAP_SHARED over a file descriptor, kept from
// forks (fork_sharing.h): the VM's GPU worker is handed the descriptor and
// maps the same pages itself (Backing::adopt); no fork gets them.
struct Mapped {
    uint8_t* data;
    int fd;
};

Mapped map_4k(uint64_t size) {
    const int fd = create_memfd("kvmgpu-guest-ram", size);
    // MAP_NORESERVE: guest RAM is mostly untouched; like kvmtool, do not
    // charge all of it against the overcommit limit up front.
    void* p = map_unforked(fd, size, MAP_NORESERVE);
    if (p == MAP_FAILED) {
        const int err = errno;
        close(fd);
        throw_errno(err, "mmap(MAP_SHARED) of a memfd of " + size_text(size));
    }
    // With THP set to "always" the kernel would quietly back this with 2 MiB
    // pages and the 4K-versus-2M comparison would measure nothing. EINVAL:
    // kernel without THP, which is what we want anyway.
    if (madvise(p, size, MADV_NOHUGEPAGE) != 0 && errno != EINVAL) {
        const int err = errno;
        munmap(p, size);
        close(fd);
        throw_errno(err, "madvise(MADV_NOHUGEPAGE)");
    }
    return {static_cast<uint8_t*>(p), fd};
}

// No MAP_NORESERVE on either huge path: the kernel then reserves every page
// at mmap time, so a short pool fails here instead of SIGBUS later.
Mapped map_huge_fd(int fd, PageSize page, uint64_t size, const char* call) {
    void* p = map_unforked(fd, size);
    if (p == MAP_FAILED) {
        const int err = errno;
        close(fd);
        throw_huge_mmap_error(err, page, size / bytes(page), call);
    }
    return {static_cast<uint8_t*>(p), fd};
}

Mapped map_hugetlbfs(PageSize page, uint64_t size, const std::string& mount) {
    // hugetlbfs grows the file to the mapping's length itself; no ftruncate.
    return map_huge_fd(open_unlinked_hugetlbfs_file(page, mount), page, size, "mmap(hugetlbfs file, MAP_SHARED)");
}

Mapped map_anonymous_huge(PageSize page, uint64_t size) {
    const bool gig = page == PageSize::k1G;
    int fd;
    try {
        // MFD_HUGE_* and MAP_HUGE_* are the same encoding (the page size's
        // log2 in bits 26..31); glibc's headers name only the latter.
        fd = create_memfd("kvmgpu-guest-ram", size, MFD_HUGETLB | (gig ? MAP_HUGE_1GB : MAP_HUGE_2MB));
    } catch (const std::system_error& e) {
        if (e.code().value() == ENOMEM || e.code().value() == ENOSPC) throw_huge_mmap_error(ENOMEM, page, size / bytes(page), "");
        throw;
    }
    return map_huge_fd(fd, page, size, gig ? "mmap(memfd MFD_HUGETLB|MFD_HUGE_1GB)" : "mmap(memfd MFD_HUGETLB|MFD_HUGE_2MB)");
}

} // namespace

std::string_view to_string(BackingSource s) {
    switch (s) {
    case BackingSource::Anonymous: return "anonymous";
    case BackingSource::Hugetlbfs: return "hugetlbfs";
    case BackingSource::AnonymousHugetlb: return "MAP_HUGETLB";
    }
    return "?";
}

std::unique_ptr<Backing> Backing::create(PageSize page, uint64_t size, BackingOptions opts) {
    check_size(page, size);
    const uint64_t pages = size / bytes(page);
    BackingSource source = BackingSource::Anonymous;
    std::string mount;

    if (page != PageSize::k4K) {
        check_pool(page, pages);
        if (auto m = find_hugetlbfs_mount(page)) {
            if (m->pages_left && *m->pages_left < pages) {
                log_line("hugetlbfs mount %s allows %llu more %s pages, %llu needed: using MAP_HUGETLB instead",
                         m->path.c_str(), static_cast<unsigned long long>(*m->pages_left), to_string(page).data(),
                         static_cast<unsigned long long>(pages));
            } else {
                source = BackingSource::Hugetlbfs;
                mount = m->path;
            }
        }
        if (source != BackingSource::Hugetlbfs) source = BackingSource::AnonymousHugetlb;
    }

    const uint64_t t0 = monotonic_ns();
    Mapped m{};
    switch (source) {
    case BackingSource::Anonymous: m = map_4k(size); break;
    case BackingSource::Hugetlbfs: m = map_hugetlbfs(page, size, mount); break;
    case BackingSource::AnonymousHugetlb: m = map_anonymous_huge(page, size); break;
    }
    uint8_t* const data = m.data;
    std::unique_ptr<Backing> b(new Backing(data, size, page, m.fd)); // from here the destructor unmaps and closes
    b->source_ = source;
    b->mount_ = std::move(mount);

    // The kernel aligns hugetlb mappings to their page size; everything that
    // maps guest RAM as huge (KVM's EPT, the guest's page tables) relies on it.
    if (reinterpret_cast<uintptr_t>(data) % bytes(page) != 0) {
        throw std::runtime_error("mmap returned " + std::to_string(reinterpret_cast<uintptr_t>(data)) +
                                 ", not aligned to " + std::string(to_string(page)));
    }
    if (opts.prefault) b->prefault();
    b->create_ns_ = monotonic_ns() - t0;

    if (source == BackingSource::Hugetlbfs) {
        log_line("%s backing of %s: hugetlbfs at %s%s", to_string(page).data(), size_text(size).c_str(),
                 b->mount_.c_str(), opts.prefault ? ", prefaulted" : "");
    } else if (source == BackingSource::AnonymousHugetlb) {
        log_line("%s backing of %s: a hugetlb memfd (MAP_HUGETLB pages; no usable hugetlbfs mount of that size)%s",
                 to_string(page).data(), size_text(size).c_str(), opts.prefault ? ", prefaulted" : "");
    }
    return b;
}

std::unique_ptr<Backing> Backing::adopt(int fd, PageSize page, uint64_t size, BackingSource source) {
    try {
        check_size(page, size);
    } catch (...) {
        close(fd);
        throw;
    }
    auto* data = static_cast<uint8_t*>(map_received(fd, size, "a received guest RAM descriptor"));
    std::unique_ptr<Backing> b(new Backing(data, size, page, fd));
    b->source_ = source;
    return b;
}

Backing::~Backing() {
    munmap(data_, size_);
    close(fd_);
}

uint64_t Backing::prefault() {
    const uint64_t t0 = monotonic_ns();
    // MADV_POPULATE_WRITE (Linux 5.14) faults every page in writable without
    // touching the data; MAP_POPULATE is not used because on the 4K path it
    // would populate before MADV_NOHUGEPAGE takes effect.
    if (madvise(data_, size_, MADV_POPULATE_WRITE) != 0) {
        if (errno != EINVAL) throw_errno(errno, "madvise(MADV_POPULATE_WRITE)");
        // Older kernel: write each page. An atomic OR with 0 is a write that
        // cannot lose a concurrent store to the same byte.
        for (uint64_t off = 0; off < size_; off += bytes(page_)) {
            // SAFETY: off < size_, inside the mapping this object owns.
            __atomic_fetch_or(data_ + off, uint8_t{0}, __ATOMIC_RELAXED);
        }
    }
    return monotonic_ns() - t0;
}

} // namespace memmap
