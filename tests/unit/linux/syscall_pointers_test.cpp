// Every pointer argument of every served call, placed so that its span
// straddles the stack guard's start, the guard's end (the stack's first
// byte), page 0's end or RAM's end: each is refused whole (EFAULT; ENOMEM
// or EINVAL where Linux says so), and nothing is written on either side.
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>

#include <gtest/gtest.h>

#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

constexpr uint64_t kStackLo = 30 * kMiB; // the guard's end

struct Pointers : Server {
    // Addresses where a span of `len` bytes starts before an edge and ends past it.
    static std::vector<uint64_t> straddling(uint64_t len) {
        const uint64_t back = len > 1 ? len / 2 : 1;
        return {kGuard - back, kStackLo - back, 4096 - back, kRam - back};
    }
    // Fills the bytes just below each edge with a marker, to see that nothing was written.
    void mark_edges() {
        for (uint64_t edge : {kGuard, kRam}) std::memset(at(edge - 4096), 0x5a, 4096);
    }
    bool edges_untouched() {
        for (uint64_t edge : {kGuard, kRam})
            for (uint64_t i = 0; i < 4096; ++i)
                if (at(edge - 4096)[i] != 0x5a) return false;
        return true;
    }
};

TEST_F(Pointers, OutputBuffersStraddlingAnEdgeAreRefusedWhole) {
    make(true);
    mark_edges();
    for (uint64_t p : straddling(4096)) {
        SCOPED_TRACE(p);
        EXPECT_EQ(ret(SYS_getcwd, p, 4096), -EFAULT); // "/" would fit before the edge: the buffer does not
        EXPECT_EQ(ret(SYS_sched_getaffinity, 0, 4096, p), -EFAULT);
        EXPECT_EQ(ret(SYS_getrandom, p, 4096, 0), -EFAULT);
        EXPECT_EQ(ret(SYS_read, 0, p, 4096), -EFAULT); // stdin: even end of file checks the buffer
        EXPECT_EQ(ret(SYS_write, 1, p, 4096), -EFAULT);
    }
    // Each fixed-size output, its bytes half before and half past the edge.
    for (uint64_t p : straddling(sizeof(utsname))) EXPECT_EQ(ret(SYS_uname, p), -EFAULT) << p;
    for (uint64_t p : straddling(sizeof(struct stat))) EXPECT_EQ(ret(SYS_fstat, 1, p), -EFAULT) << p;
    for (uint64_t p : straddling(sizeof(timespec))) {
        EXPECT_EQ(ret(SYS_clock_gettime, 1, p), -EFAULT) << p;
        EXPECT_EQ(ret(SYS_clock_getres, 1, p), -EFAULT) << p;
        EXPECT_EQ(ret(SYS_gettimeofday, p, 0), -EFAULT) << p; // a timeval: as large
        EXPECT_EQ(ret(SYS_prlimit64, 0, 7 /* RLIMIT_NOFILE */, 0, p), -EFAULT) << p; // an rlimit: as large
    }
    for (uint64_t p : straddling(8)) {
        EXPECT_EQ(ret(SYS_time, p), -EFAULT) << p;
        EXPECT_EQ(ret(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, p), -EFAULT) << p;
        EXPECT_EQ(ret(SYS_rt_sigprocmask, 0, 0, p, 8), -EFAULT) << p;
    }
    for (uint64_t p : straddling(32)) EXPECT_EQ(ret(SYS_rt_sigaction, 2, 0, p, 8), -EFAULT) << p;
    EXPECT_TRUE(edges_untouched());
    EXPECT_EQ(console, "");
}

TEST_F(Pointers, ShareBuffersStraddlingAnEdgeAreRefusedWhole) {
    make(true);
    put(kBuf, "in.txt");
    const int64_t fd = ret(SYS_open, kBuf, O_RDONLY);
    ASSERT_GE(fd, 3);
    put(kBuf, "/sub");
    const int64_t dir_fd = ret(SYS_open, kBuf, O_RDONLY | O_DIRECTORY);
    ASSERT_GE(dir_fd, 3);
    std::filesystem::create_symlink("in.txt", dir / "link");
    put(kBuf + 64, "link");
    mark_edges();
    for (uint64_t p : straddling(4096)) {
        SCOPED_TRACE(p);
        EXPECT_EQ(ret(SYS_read, fd, p, 4096), -EFAULT); // the file has 10 bytes: they would fit
        EXPECT_EQ(ret(SYS_pread64, fd, p, 4096, 0), -EFAULT);
        EXPECT_EQ(ret(SYS_getdents64, dir_fd, p, 4096), -EFAULT);
        EXPECT_EQ(ret(SYS_readlink, kBuf + 64, p, 4096), -EFAULT); // "in.txt" would fit
    }
    for (uint64_t p : straddling(sizeof(struct stat)))
        EXPECT_EQ(ret(SYS_newfstatat, static_cast<uint64_t>(-100), kBuf + 64, p, 0), -EFAULT) << p;
    EXPECT_TRUE(edges_untouched());
}

TEST_F(Pointers, InputsStraddlingAnEdgeAreRefusedWhole) {
    make(true);
    for (uint64_t p : straddling(32)) EXPECT_EQ(ret(SYS_rt_sigaction, 2, p, 0, 8), -EFAULT) << p;
    for (uint64_t p : straddling(8)) EXPECT_EQ(ret(SYS_rt_sigprocmask, 0, p, 0, 8), -EFAULT) << p;
    for (uint64_t p : straddling(sizeof(timespec))) {
        EXPECT_EQ(ret(SYS_nanosleep, p, 0), -EFAULT) << p;
        EXPECT_EQ(ret(SYS_futex, kBuf, FUTEX_WAIT, 0, p), -EFAULT) << p; // the time-out
    }
    for (uint64_t p : straddling(4 * sizeof(iovec))) EXPECT_EQ(ret(SYS_writev, 1, p, 4), -EFAULT) << p;
    // A futex word is 4 aligned bytes: it cannot straddle, but its last one can be past RAM.
    EXPECT_EQ(ret(SYS_futex, kRam, FUTEX_WAKE, 1), -EFAULT);
    EXPECT_EQ(ret(SYS_futex, kGuard, FUTEX_WAKE, 1), -EFAULT);
    EXPECT_EQ(ret(SYS_futex, kStackLo - 4, FUTEX_WAKE, 1), -EFAULT);
}

// A path is read up to its NUL: one whose bytes run into an edge is refused;
// one that ends before the edge is the path it spells (as on Linux: a
// program's argv strings sit just below RAM's end).
TEST_F(Pointers, PathsRunningIntoAnEdgeAreRefused) {
    make(true);
    for (uint64_t edge : {kGuard, kRam}) {
        SCOPED_TRACE(edge);
        std::memcpy(at(edge - 6), "in.txt", 6); // no NUL before the edge
        EXPECT_EQ(ret(SYS_access, edge - 6, 0), -EFAULT);
        EXPECT_EQ(ret(SYS_faccessat, static_cast<uint64_t>(-100), edge - 6, 0), -EFAULT);
        EXPECT_EQ(ret(SYS_open, edge - 6, O_RDONLY), -EFAULT);
        EXPECT_EQ(ret(SYS_newfstatat, static_cast<uint64_t>(-100), edge - 6, kBuf, 0), -EFAULT);
        EXPECT_EQ(ret(SYS_readlink, edge - 6, kBuf, 64), -EFAULT);
        std::memcpy(at(edge - 7), "in.txt", 7); // the NUL is the edge's last byte
        EXPECT_EQ(ret(SYS_access, edge - 7, 0), 0);
    }
    put(kStackLo, "in.txt");
    EXPECT_EQ(ret(SYS_access, kStackLo - 3, 0), -EFAULT); // starts in the guard
    EXPECT_EQ(ret(SYS_access, kStackLo, 0), 0);
}

TEST_F(Pointers, CloneTidWordsStraddlingAnEdgeAreRefused) {
    make(false);
    constexpr uint64_t kFlags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                                CLONE_PARENT_SETTID | CLONE_CHILD_SETTID;
    for (uint64_t p : straddling(4)) {
        SCOPED_TRACE(p);
        EXPECT_EQ(ret(SYS_clone, kFlags, kBuf + 65536, p, kBuf + 32), -EFAULT);
        EXPECT_EQ(ret(SYS_clone, kFlags, kBuf + 65536, kBuf + 16, p), -EFAULT);
    }
    EXPECT_EQ(ret(SYS_clone, kFlags & ~(CLONE_PARENT_SETTID | CLONE_CHILD_SETTID), kStackLo + 4), -EINVAL);
}

TEST_F(Pointers, MemoryRangesStraddlingAnEdge) {
    make(false);
    EXPECT_EQ(ret(SYS_mprotect, kGuard - 4096, 8192, 1), -ENOMEM);
    EXPECT_EQ(ret(SYS_mprotect, kRam - 4096, 8192, 1), -ENOMEM);
    EXPECT_EQ(ret(SYS_mmap, kGuard - 4096, 8192, 3, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), -ENOMEM);
    std::memset(at(kStackLo), 0x33, 16);
    EXPECT_EQ(ret(SYS_madvise, kGuard - 4096, 3 * kMiB, 4 /* MADV_DONTNEED */), 0);
    EXPECT_EQ(at(kStackLo)[0], 0x33); // the stack is not the allocator's
}

// process_vm_readv/writev on the guest itself: a copy between its own
// iovecs, a bad remote range refused (EFAULT) rather than faulting, and any
// other pid or flag refused.
TEST_F(Pointers, ProcessVmCopiesWithinTheGuestAndRefusesBadRanges) {
    make(true);
    const uint64_t src = 8 * kMiB, dst = 9 * kMiB, iov = 10 * kMiB;
    put(src, "hello, guest");
    auto iovec_at = [&](uint64_t where, uint64_t base, uint64_t len) {
        std::memcpy(at(where), &base, 8);
        std::memcpy(at(where + 8), &len, 8);
    };
    iovec_at(iov, dst, 5);        // local: two pieces
    iovec_at(iov + 16, dst + 5, 7);
    iovec_at(iov + 32, src, 12);  // remote: one
    EXPECT_EQ(ret(SYS_process_vm_readv, 1, iov, 2, iov + 32, 1, 0), 12);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(at(dst)), 12), "hello, guest");
    iovec_at(iov + 32, kRam - 4, 8); // past RAM's end
    EXPECT_EQ(ret(SYS_process_vm_readv, 1, iov, 2, iov + 32, 1, 0), -EFAULT);
    iovec_at(iov + 32, src, 12);
    EXPECT_EQ(ret(SYS_process_vm_readv, 2, iov, 2, iov + 32, 1, 0), -ESRCH);
    EXPECT_EQ(ret(SYS_process_vm_readv, 1, iov, 2, iov + 32, 1, 1), -EINVAL);
    EXPECT_EQ(ret(SYS_process_vm_readv, 1, iov, 1025, iov + 32, 1, 0), -EINVAL);
    // A write copies local to remote.
    put(src, "HELLO");
    iovec_at(iov, src, 5);
    iovec_at(iov + 32, dst + 100, 5);
    EXPECT_EQ(ret(SYS_process_vm_writev, 1, iov, 1, iov + 32, 1, 0), 5);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(at(dst + 100)), 5), "HELLO");
}

} // namespace
} // namespace kvmgpu::linux_abi
