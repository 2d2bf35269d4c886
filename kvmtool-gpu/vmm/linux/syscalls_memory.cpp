// brk, mmap and friends over GuestAddressSpace. Protections are recorded
// nowhere: the identity map is one read-write-execute mapping of RAM, so
// mprotect succeeds on any RAM range without changing anything.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

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
    if (!rounded || *rounded > space_.hi() - space_.lo()) return -ENOMEM;
    OpenFile* file = nullptr;
    if (!(flags & MAP_ANONYMOUS)) {
        file = fds_.get(fd);
        if (!file) return -EBADF;
        if (file->kind != OpenFile::Kind::Host || file->directory || file->stream) return -ENODEV;
        // A shared file mapping would need writes carried back to the file.
        if ((flags & kMapTypeMask) != MAP_PRIVATE) return -ENODEV;
        if ((file->flags & O_ACCMODE) == O_WRONLY) return -EACCES;
    }
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

int64_t SyscallServer::sys_munmap(uint64_t addr, uint64_t len) {
    if (addr % kPage || len == 0) return -EINVAL;
    const auto rounded = page_round_up(len);
    if (!rounded) return -EINVAL;
    space_.unmap(addr, *rounded);
    return 0;
}

int64_t SyscallServer::sys_mprotect(uint64_t addr, uint64_t len, uint64_t prot) {
    if (addr % kPage) return -EINVAL;
    if (prot & ~uint64_t{PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN | PROT_GROWSUP}) return -EINVAL;
    if (len == 0) return 0;
    const auto rounded = page_round_up(len);
    if (!rounded || !user_.span(addr, *rounded)) return -ENOMEM;
    return 0;
}

int64_t SyscallServer::sys_mremap(const uint64_t* a) {
    const uint64_t old_addr = a[0], old_len = a[1], new_len = a[2], flags = a[3];
    if (flags & ~uint64_t{MREMAP_MAYMOVE}) return -EINVAL; // MREMAP_FIXED, MREMAP_DONTUNMAP: not served
    if (old_addr % kPage || old_len == 0 || new_len == 0) return -EINVAL;
    const auto got = space_.remap(old_addr, old_len, new_len, (flags & MREMAP_MAYMOVE) != 0);
    return got ? static_cast<int64_t>(*got) : -ENOMEM;
}

int64_t SyscallServer::sys_madvise(uint64_t addr, uint64_t len, uint64_t advice) {
    if (addr % kPage) return -EINVAL;
    // MADV_DONTNEED: what brk and mmap handed out reads as zero afterwards,
    // as Linux gives private anonymous memory (glibc's malloc relies on it);
    // the program's own pages and the stack keep their bytes. Other advice
    // changes nothing here.
    if (advice == MADV_DONTNEED) space_.zero_in_use(addr, len);
    return 0;
}

// Any guest RAM: the identity map already gives the guest all of it
// (U=1), so a second name gives it nothing new.
int64_t SyscallServer::sys_alias(uint64_t va, uint64_t gpa, uint64_t len) { return -aliases_.map(va, gpa, len); }

} // namespace kvmgpu::linux_abi
