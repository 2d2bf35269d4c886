// brk, mmap and friends over GuestAddressSpace (RAM) and the file window
// (file_window.h). A private file mapping the guest does not fix in RAM is
// mapped in the window, the host's pages of the file, when the file lies
// in a read-only mount (nothing the guest does can shorten it under the
// mapping); otherwise, and when the window is full, its bytes are copied
// into RAM. In RAM, protections are recorded nowhere: the identity map is
// one read-write-execute mapping of RAM, so mprotect succeeds on any RAM
// range without changing anything. In the window they are the slots'.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"

namespace kvmgpu::linux_abi {

namespace {
constexpr uint64_t kMapTypeMask = 0x03;             // MAP_SHARED, MAP_PRIVATE, MAP_SHARED_VALIDATE
constexpr uint64_t kMapFixedNoreplace = 0x100000;   // MAP_FIXED_NOREPLACE
constexpr uint64_t kMapKnown = kMapTypeMask | MAP_FIXED | MAP_ANONYMOUS | MAP_32BIT | MAP_GROWSDOWN | MAP_DENYWRITE |
                               MAP_EXECUTABLE | MAP_LOCKED | MAP_NORESERVE | MAP_POPULATE | MAP_NONBLOCK | MAP_STACK |
                               MAP_HUGETLB | kMapFixedNoreplace;
} // namespace

int64_t SyscallServer::sys_brk(uint64_t want) { return static_cast<int64_t>(space_.brk(want)); }

int64_t SyscallServer::sys_mmap(const uint64_t* a) {
    const uint64_t addr = a[0], len = a[1], flags = a[3], off = a[5];
    const auto fd = static_cast<int64_t>(static_cast<int32_t>(a[4]));
    if (len == 0 || off % kPage || (flags & ~kMapKnown) || (flags & kMapTypeMask) == 0) return -EINVAL;
    const auto rounded = page_round_up(len);
    if (!rounded) return -ENOMEM;
    OpenFile* file = nullptr;
    if (!(flags & MAP_ANONYMOUS)) {
        file = fds_.get(fd);
        if (!file) return -EBADF;
        if (file->kind != OpenFile::Kind::Host || file->directory || file->stream) return -ENODEV;
        // A shared file mapping would need writes carried back to the file.
        if ((flags & kMapTypeMask) != MAP_PRIVATE) return -ENODEV;
        if ((file->flags & O_ACCMODE) == O_WRONLY) return -EACCES;
    }
    if (auto served = window_mmap(a, *rounded, file)) return *served;
    if (*rounded > space_.hi() - space_.lo()) return -ENOMEM;
    uint64_t at = 0;
    if (flags & (MAP_FIXED | kMapFixedNoreplace)) {
        if (addr % kPage) return -EINVAL;
        const bool replace = (flags & MAP_FIXED) != 0;
        if (!space_.in_managed(addr, *rounded)) return -ENOMEM;
        if (!space_.map_fixed(addr, *rounded, replace)) return replace ? -ENOMEM : -EEXIST;
        at = addr;
    } else if (addr && addr % kPage == 0 && space_.in_managed(addr, *rounded) && space_.map_fixed(addr, *rounded, false)) {
        at = addr; // the hint was free
    } else {
        const auto got = space_.map_anywhere(*rounded);
        if (!got) return -ENOMEM;
        at = *got;
    }
    if (file) {
        auto dst = user_.span(at, *rounded);
        if (!dst) return -EFAULT; // cannot happen: the managed range is guest RAM
        uint64_t done = 0;
        while (done < len) {
            const ssize_t n = ::pread(file->host.get(), dst->data() + done, len - done, static_cast<off_t>(off + done));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                const int err = errno;
                space_.unmap(at, *rounded);
                return -err;
            }
            if (n == 0) break; // past the end of the file: the rest stays zero
            done += static_cast<uint64_t>(n);
        }
    }
    return static_cast<int64_t>(at);
}

std::optional<int64_t> SyscallServer::window_mmap(const uint64_t* a, uint64_t len, OpenFile* file) {
    const uint64_t addr = a[0], flags = a[3], off = a[5];
    const int prot = static_cast<int>(a[2] & (PROT_READ | PROT_WRITE | PROT_EXEC));
    if (!window_) return std::nullopt;
    const bool fixed = (flags & (MAP_FIXED | kMapFixedNoreplace)) != 0;
    // A file the guest cannot write (a read-only mount, opened without write).
    const bool mappable = file && (file->flags & O_ACCMODE) == O_RDONLY && opts_.share &&
                          opts_.share->read_only_at(-1, file->link);
    struct stat st {};
    if (mappable && ::fstat(file->host.get(), &st) != 0) return -errno;
    const uint64_t size = static_cast<uint64_t>(std::max<off_t>(st.st_size, 0));
    if (!fixed) {
        if (!mappable || (flags & MAP_32BIT)) return std::nullopt;
        const auto at = window_->place(len);
        if (!at) return std::nullopt; // full: copied into RAM
        const int rc = window_->map_file(*at, len, file->host.get(), off, size, prot, file->link);
        if (rc == -ENOMEM) return std::nullopt; // out of slots or pieces: copied into RAM
        return rc ? rc : static_cast<int64_t>(*at);
    }
    if (!window_->overlaps(addr, len)) return std::nullopt;
    if (addr % kPage) return -EINVAL;
    if (!window_->inside(addr, len)) return -ENOMEM; // across the window's edge
    if ((flags & kMapFixedNoreplace) && !(flags & MAP_FIXED) && window_->span(addr, len)) return -EEXIST;
    if (mappable) {
        const int rc = window_->map_file(addr, len, file->host.get(), off, size, prot, file->link);
        return rc ? rc : static_cast<int64_t>(addr);
    }
    if (const int rc = window_->map_anonymous(addr, len, prot)) return rc;
    if (file) {
        // A file the window cannot map: its bytes copied into anonymous pages there.
        auto dst = window_->span(addr, len, true);
        for (uint64_t done = 0; dst && done < len;) {
            const ssize_t n = ::pread(file->host.get(), dst->data() + done, len - done, static_cast<off_t>(off + done));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                const int err = errno;
                window_->unmap(addr, len);
                return -err;
            }
            if (n == 0) break;
            done += static_cast<uint64_t>(n);
        }
    }
    return static_cast<int64_t>(addr);
}

int64_t SyscallServer::sys_munmap(uint64_t addr, uint64_t len) {
    if (addr % kPage || len == 0) return -EINVAL;
    const auto rounded = page_round_up(len);
    if (!rounded) return -EINVAL;
    if (window_)
        if (const int rc = window_->unmap(addr, *rounded)) return rc;
    space_.unmap(addr, *rounded);
    return 0;
}

int64_t SyscallServer::sys_mprotect(uint64_t addr, uint64_t len, uint64_t prot) {
    if (addr % kPage) return -EINVAL;
    if (prot & ~uint64_t{PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN | PROT_GROWSUP}) return -EINVAL;
    if (len == 0) return 0;
    const auto rounded = page_round_up(len);
    if (rounded && window_ && window_->overlaps(addr, *rounded))
        return window_->protect(addr, *rounded, static_cast<int>(prot & (PROT_READ | PROT_WRITE | PROT_EXEC)));
    if (!rounded || !user_.span(addr, *rounded)) return -ENOMEM;
    return 0;
}

int64_t SyscallServer::sys_mremap(const uint64_t* a) {
    const uint64_t old_addr = a[0], old_len = a[1], new_len = a[2], flags = a[3];
    if (flags & ~uint64_t{MREMAP_MAYMOVE}) return -EINVAL; // MREMAP_FIXED, MREMAP_DONTUNMAP: not served
    if (old_addr % kPage || old_len == 0 || new_len == 0) return -EINVAL;
    if (window_ && window_->overlaps(old_addr, old_len))
        return window_->remap(old_addr, old_len, new_len, (flags & MREMAP_MAYMOVE) != 0);
    const auto got = space_.remap(old_addr, old_len, new_len, (flags & MREMAP_MAYMOVE) != 0);
    return got ? static_cast<int64_t>(*got) : -ENOMEM;
}

int64_t SyscallServer::sys_madvise(uint64_t addr, uint64_t len, uint64_t advice) {
    if (addr % kPage) return -EINVAL;
    // MADV_DONTNEED: what brk and mmap handed out reads as zero afterwards,
    // as Linux gives private anonymous memory (glibc's malloc relies on it);
    // the program's own pages and the stack keep their bytes. Other advice
    // changes nothing here.
    if (advice == MADV_DONTNEED) {
        space_.zero_in_use(addr, len);
        // In the window, as Linux: a private file page reads the file again, an anonymous one zero.
        if (window_) window_->discard(addr, len);
    }
    return 0;
}

// Any guest RAM: the identity map already gives the guest all of it
// (U=1), so a second name gives it nothing new.
int64_t SyscallServer::sys_alias(uint64_t va, uint64_t gpa, uint64_t len) { return -aliases_.map(va, gpa, len); }

} // namespace kvmgpu::linux_abi
