// The system-call server without KVM: each call with good and hostile
// arguments (pointers outside RAM, wrapping, into unmapped pages or the
// MMIO window; huge sizes; descriptor floods), what it does to guest RAM,
// and its counters.
#include <sched.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

TEST_F(Server, ConsoleWritesAndBadPointers) {
    make(false);
    put(kBuf, "hello\n");
    EXPECT_EQ(ret(SYS_write, 1, kBuf, 6), 6);
    EXPECT_EQ(ret(SYS_write, 2, kBuf, 3), 3);
    EXPECT_EQ(console, "hello\nhel");
    EXPECT_EQ(ret(SYS_write, 1, 0, 6), -EFAULT);                    // page 0
    EXPECT_EQ(ret(SYS_write, 1, 16, 6), -EFAULT);
    EXPECT_EQ(ret(SYS_write, 1, kRam - 3, 6), -EFAULT);             // past RAM
    EXPECT_EQ(ret(SYS_write, 1, ~0ull - 2, 6), -EFAULT);            // wraps
    EXPECT_EQ(ret(SYS_write, 1, kGuard + 100, 6), -EFAULT);         // the stack guard
    EXPECT_EQ(ret(SYS_write, 1, 0x4000000000ull, 6), -EFAULT);      // the MMIO window
    EXPECT_EQ(ret(SYS_write, 7, kBuf, 6), -EBADF);
    EXPECT_EQ(ret(SYS_write, 0, kBuf, 6), -EBADF);
    EXPECT_EQ(ret(SYS_read, 0, kBuf, 6), 0); // stdin: end of file
    EXPECT_EQ(ret(SYS_write, 1, kBuf, 0), 0);
    // writev: an iovec array outside RAM, a count over UIO_MAXIOV.
    const uint64_t iov[4] = {kBuf, 2, kBuf + 2, 3};
    std::memcpy(at(kBuf + 4096), iov, sizeof iov);
    console.clear();
    EXPECT_EQ(ret(SYS_writev, 1, kBuf + 4096, 2), 5);
    EXPECT_EQ(console, "hello");
    EXPECT_EQ(ret(SYS_writev, 1, kRam - 8, 2), -EFAULT);
    EXPECT_EQ(ret(SYS_writev, 1, kBuf + 4096, 5000), -EINVAL);
    EXPECT_EQ(ret(SYS_ioctl, 1, 0x5401 /* TCGETS */, kBuf), -ENOTTY);
}

TEST_F(Server, MemoryCalls) {
    make(false);
    EXPECT_EQ(ret(SYS_brk, 0), 8 * kMiB);
    EXPECT_EQ(ret(SYS_brk, 8 * kMiB + 12345), 8 * kMiB + 12345);
    EXPECT_EQ(ret(SYS_brk, 1ull << 40), 8 * kMiB + 12345); // huge: refused, old break
    const int64_t m = ret(SYS_mmap, 0, 3 * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_GT(m, 0);
    EXPECT_GE(static_cast<uint64_t>(m), 1 * kMiB);
    EXPECT_LE(static_cast<uint64_t>(m) + 3 * kMiB, kGuard);
    EXPECT_EQ(ret(SYS_mmap, 0, 1ull << 40, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), -ENOMEM);
    EXPECT_EQ(ret(SYS_mmap, 0, ~0ull, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), -ENOMEM);
    EXPECT_EQ(ret(SYS_mmap, 0, 0, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), -EINVAL);
    EXPECT_EQ(ret(SYS_mmap, 0, 4096, 3, MAP_ANONYMOUS, -1, 0), -EINVAL); // neither shared nor private
    EXPECT_EQ(ret(SYS_mmap, 29 * kMiB, 4096, 3, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), -ENOMEM);
    EXPECT_EQ(ret(SYS_mmap, 0, 4096, 3, MAP_PRIVATE, 9, 0), -EBADF);
    EXPECT_EQ(ret(SYS_munmap, m, 3 * kMiB), 0);
    EXPECT_EQ(ret(SYS_munmap, m + 1, 4096), -EINVAL);
    EXPECT_EQ(ret(SYS_mprotect, kBuf, 4096, PROT_READ), 0);
    EXPECT_EQ(ret(SYS_mprotect, kRam, 4096, PROT_READ), -ENOMEM);
    std::memset(at(kBuf), 0x77, 8192);
    EXPECT_EQ(ret(SYS_madvise, kBuf, 4096, MADV_WILLNEED), 0);
    EXPECT_EQ(at(kBuf)[0], 0x77);
    EXPECT_EQ(ret(SYS_madvise, kBuf, 4096, MADV_DONTNEED), 0);
    EXPECT_EQ(at(kBuf)[0], 0);       // reads as zero, as Linux gives it
    EXPECT_EQ(at(kBuf + 4096)[0], 0x77);
    at(30 * kMiB)[0] = 0x55; // the stack: not what brk and mmap handed out, left alone
    EXPECT_EQ(ret(SYS_madvise, 30 * kMiB, 4096, MADV_DONTNEED), 0);
    EXPECT_EQ(at(30 * kMiB)[0], 0x55);
    EXPECT_EQ(ret(SYS_madvise, 0, ~0ull, MADV_DONTNEED), 0); // wraps: clamped, no crash
    EXPECT_EQ(at(30 * kMiB)[0], 0x55);
    EXPECT_EQ(at(kBuf + 4096)[0], 0);
    const int64_t r = ret(SYS_mremap, kBuf, kMiB, 2 * kMiB, 1 /* MREMAP_MAYMOVE */);
    EXPECT_GT(r, 0);
    EXPECT_EQ(ret(SYS_mremap, 0x123000, 4096, 8192, 1), -ENOMEM); // not a mapping
}

TEST_F(Server, FilesInTheShare) {
    make(true);
    put(kBuf, "in.txt");
    const int64_t fd = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY);
    ASSERT_GE(fd, 3);
    EXPECT_EQ(ret(SYS_read, fd, kBuf + 100, 4), 4);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(at(kBuf + 100)), 4), "0123");
    EXPECT_EQ(ret(SYS_pread64, fd, kBuf + 100, 2, 8), 2);
    EXPECT_EQ(ret(SYS_lseek, fd, 0, 2 /* SEEK_END */), 10);
    EXPECT_EQ(ret(SYS_read, fd, kRam - 1, 4), -EFAULT);
    EXPECT_EQ(ret(SYS_write, fd, kBuf, 1), -EBADF); // opened read-only
    EXPECT_EQ(ret(SYS_fstat, fd, kBuf + 200), 0);
    struct stat st;
    std::memcpy(&st, at(kBuf + 200), sizeof st);
    EXPECT_EQ(st.st_size, 10);
    EXPECT_EQ(ret(SYS_fstat, fd, 8), -EFAULT);
    // A file mapped privately: its bytes, then zeros.
    const int64_t m = ret(SYS_mmap, 0, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
    ASSERT_GT(m, 0);
    EXPECT_EQ(std::memcmp(at(m), "0123456789", 10), 0);
    EXPECT_EQ(at(m)[10], 0);
    EXPECT_EQ(ret(SYS_mmap, 0, 8192, PROT_READ, MAP_SHARED, fd, 0), -ENODEV);
    EXPECT_EQ(ret(SYS_close, fd), 0);
    EXPECT_EQ(ret(SYS_close, fd), -EBADF);

    put(kBuf, "/sub");
    const int64_t d = ret(SYS_open, kBuf, O_RDONLY | O_DIRECTORY);
    ASSERT_GE(d, 3);
    const int64_t n = ret(SYS_getdents64, d, kBuf + 4096, 4096);
    EXPECT_GT(n, 0);
    EXPECT_EQ(ret(SYS_getdents64, d, 0, 4096), -EFAULT);
    put(kBuf, "a");
    EXPECT_GE(ret(SYS_openat, d, kBuf, O_RDONLY), 3); // relative to a directory descriptor
    EXPECT_EQ(ret(SYS_openat, 1, kBuf, O_RDONLY), -ENOTDIR);
    EXPECT_EQ(ret(SYS_openat, 200, kBuf, O_RDONLY), -EBADF);

    put(kBuf, "../in.txt"); // ".." at the root stays at the root
    EXPECT_GE(ret(SYS_open, kBuf, O_RDONLY), 3);
    put(kBuf, "out.txt");
    const int64_t w = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(w, 3);
    put(kBuf + 100, "written");
    EXPECT_EQ(ret(SYS_write, w, kBuf + 100, 7), 7);
    EXPECT_EQ(ret(SYS_close, w), 0);
    std::ifstream back(dir / "out.txt");
    std::string text;
    back >> text;
    EXPECT_EQ(text, "written");

    EXPECT_EQ(ret(SYS_open, 0, O_RDONLY), -EFAULT);
    std::memset(at(kRam - 2), 'a', 1), std::memset(at(kRam - 1), 'a', 1);
    EXPECT_EQ(ret(SYS_open, kRam - 2, O_RDONLY), -EFAULT); // the string runs off RAM
    std::memset(at(kBuf), 'a', 8192);
    EXPECT_EQ(ret(SYS_open, kBuf, O_RDONLY), -ENAMETOOLONG);
    put(kBuf, "/proc/self/exe");
    EXPECT_EQ(ret(SYS_readlink, kBuf, kBuf + 100, 100), -ENOENT);
    EXPECT_EQ(ret(SYS_getcwd, kBuf, 100), 2);
    EXPECT_STREQ(reinterpret_cast<char*>(at(kBuf)), "/");
}

// The files the VMM makes up, with or without a share (syscalls_proc_files.cpp).
TEST_F(Server, MadeUpFiles) {
    exe = std::filesystem::read_symlink("/proc/self/exe"); // this test binary stands in for the guest program
    make(false);
    auto open_path = [&](const char* p, uint64_t flags = O_RDONLY) {
        put(kBuf, p);
        return ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, flags);
    };
    // /dev/stdout by name: the console, as fd 1 is.
    const int64_t out = open_path("/dev/stdout", O_WRONLY | O_CREAT | O_TRUNC);
    ASSERT_GE(out, 3);
    put(kBuf + 100, "by name\n");
    EXPECT_EQ(ret(SYS_write, out, kBuf + 100, 8), 8);
    EXPECT_EQ(console, "by name\n");
    EXPECT_GE(open_path("/dev/fd/2", O_WRONLY), 3);
    EXPECT_GE(open_path("/proc/self/fd/0"), 3);
    EXPECT_EQ(open_path("/dev/fd/77"), -ENOENT);
    EXPECT_EQ(open_path("/dev/fd/99999999"), -ENOENT);
    // /dev/null and /dev/zero: the host's devices.
    const int64_t null = open_path("/dev/null", O_RDWR);
    ASSERT_GE(null, 3);
    EXPECT_EQ(ret(SYS_write, null, kBuf, 100), 100);
    EXPECT_EQ(ret(SYS_read, null, kBuf, 100), 0);
    const int64_t zero = open_path("/dev/zero");
    std::memset(at(kBuf + 4096), 0x55, 64);
    EXPECT_EQ(ret(SYS_read, zero, kBuf + 4096, 64), 64);
    EXPECT_EQ(at(kBuf + 4096)[63], 0);
    EXPECT_GE(open_path("/dev/urandom"), 3);
    // One CPU, as sched_getaffinity says; the file cannot be written.
    const int64_t online = open_path("/sys/devices/system/cpu/online");
    ASSERT_GE(online, 3);
    EXPECT_EQ(ret(SYS_read, online, kBuf + 4096, 64), 2);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(at(kBuf + 4096)), 2), "0\n");
    EXPECT_EQ(open_path("/sys/devices/system/cpu/online", O_WRONLY), -EACCES);
    EXPECT_EQ(open_path("/sys/devices/system/cpu/cpu0"), -ENOENT); // nothing else of /sys
    // /proc/self/exe: the program's bytes, and the path the guest knows it by.
    const int64_t self = open_path("/proc/self/exe");
    ASSERT_GE(self, 3);
    EXPECT_EQ(ret(SYS_read, self, kBuf + 4096, 4), 4);
    EXPECT_EQ(std::memcmp(at(kBuf + 4096), "\x7f" "ELF", 4), 0);
    EXPECT_EQ(open_path("/proc/self/exe", O_RDWR), -ETXTBSY);
    put(kBuf, "/proc/self/exe");
    EXPECT_EQ(ret(SYS_readlink, kBuf, kBuf + 100, 100), 13);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(at(kBuf + 100)), 13), "/usr/bin/prog");
    EXPECT_EQ(ret(SYS_readlink, kBuf, kRam - 2, 100), -EFAULT);
    put(kBuf, "/dev/stdout");
    EXPECT_EQ(ret(SYS_readlink, kBuf, kBuf + 100, 100), 15);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(at(kBuf + 100)), 15), "/proc/self/fd/1");
    put(kBuf, "/dev/null");
    EXPECT_EQ(ret(SYS_newfstatat, static_cast<uint64_t>(-100), kBuf, kBuf + 200, 0), 0);
    struct stat st;
    std::memcpy(&st, at(kBuf + 200), sizeof st);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    EXPECT_EQ(ret(SYS_access, kBuf, R_OK | W_OK), 0);
    put(kBuf, "/proc/self/exe");
    EXPECT_EQ(ret(SYS_access, kBuf, X_OK), 0);
    EXPECT_EQ(ret(SYS_access, kBuf, W_OK), -EACCES);
    // Only absolute paths, or relative to the cwd "/", are these files.
    put(kBuf, "dev/null");
    EXPECT_GE(ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY), 3);
    EXPECT_EQ(ret(SYS_openat, 1, kBuf, O_RDONLY), -ENOENT); // no share: no file system for the rest
}

TEST_F(Server, DescriptorFloodEndsInEmfile) {
    make(true);
    put(kBuf, "in.txt");
    int64_t last = 0;
    int opened = 0;
    for (int i = 0; i < 400; ++i) {
        last = ret(SYS_open, kBuf, O_RDONLY);
        if (last < 0) break;
        ++opened;
    }
    EXPECT_EQ(last, -EMFILE);
    EXPECT_EQ(opened, kMaxFds - 3);
    EXPECT_EQ(ret(SYS_dup, 1), -EMFILE);
    EXPECT_EQ(ret(SYS_close, 100), 0);
    EXPECT_EQ(ret(SYS_dup, 1), 100);
    EXPECT_EQ(ret(SYS_dup2, 1, kMaxFds), -EBADF);
}

TEST_F(Server, NoShareNoFiles) {
    make(false);
    put(kBuf, "in.txt");
    EXPECT_EQ(ret(SYS_open, kBuf, O_RDONLY), -ENOENT);
    EXPECT_EQ(ret(SYS_newfstatat, static_cast<uint64_t>(-100), kBuf, kBuf + 100, 0), -ENOENT);
}

TEST_F(Server, ReadOnlyShare) {
    make(true, true);
    put(kBuf, "new.txt");
    EXPECT_EQ(ret(SYS_open, kBuf, O_WRONLY | O_CREAT, 0644), -EROFS);
    EXPECT_EQ(ret(SYS_access, kBuf, W_OK), -ENOENT);
    put(kBuf, "in.txt");
    EXPECT_EQ(ret(SYS_access, kBuf, W_OK), -EROFS);
    EXPECT_EQ(ret(SYS_access, kBuf, R_OK), 0);
}

TEST_F(Server, ProcessCalls) {
    make(false);
    EXPECT_EQ(ret(SYS_arch_prctl, 0x1002, 0x7000), 0);
    EXPECT_EQ(cpu.fs_base, 0x7000u);
    EXPECT_EQ(ret(SYS_arch_prctl, 0x1002, 1ull << 47), -EPERM);
    EXPECT_EQ(ret(SYS_arch_prctl, 0x1003, kBuf), 0);
    uint64_t fs;
    std::memcpy(&fs, at(kBuf), 8);
    EXPECT_EQ(fs, 0x7000u);
    EXPECT_EQ(ret(SYS_arch_prctl, 0x1003, 8), -EFAULT);
    EXPECT_EQ(ret(SYS_arch_prctl, 0x3001, kBuf), -EINVAL);
    EXPECT_EQ(ret(SYS_uname, kBuf), 0);
    EXPECT_STREQ(reinterpret_cast<utsname*>(at(kBuf))->sysname, "Linux");
    EXPECT_STREQ(reinterpret_cast<utsname*>(at(kBuf))->machine, "x86_64");
    EXPECT_EQ(ret(SYS_prlimit64, 0, 3 /* RLIMIT_STACK */, 0, kBuf), 0);
    uint64_t lim[2];
    std::memcpy(lim, at(kBuf), 16);
    EXPECT_EQ(lim[0], 2 * kMiB);
    EXPECT_EQ(ret(SYS_prlimit64, 0, 3, kBuf, 0), -EPERM);
    EXPECT_EQ(ret(SYS_prlimit64, 0, 99, 0, kBuf), -EINVAL);
    // Signal actions are recorded and read back, never delivered.
    std::memset(at(kBuf), 0x42, 32);
    EXPECT_EQ(ret(SYS_rt_sigaction, 2, kBuf, 0, 8), 0);
    EXPECT_EQ(ret(SYS_rt_sigaction, 2, 0, kBuf + 64, 8), 0);
    EXPECT_EQ(std::memcmp(at(kBuf), at(kBuf + 64), 32), 0);
    EXPECT_EQ(ret(SYS_rt_sigaction, 9, kBuf, 0, 8), -EINVAL);
    EXPECT_EQ(ret(SYS_rt_sigaction, 65, 0, 0, 8), -EINVAL);
    EXPECT_EQ(ret(SYS_rt_sigprocmask, 2, kBuf, kBuf + 64, 8), 0);
    EXPECT_EQ(ret(SYS_sched_getaffinity, 0, 128, kBuf), 8);
    EXPECT_EQ(ret(SYS_sched_getaffinity, 0, 4, kBuf), -EINVAL);
    // Scheduling priorities' bounds, Linux's (PyTorch asks at import).
    EXPECT_EQ(ret(SYS_sched_get_priority_max, SCHED_FIFO), 99);
    EXPECT_EQ(ret(SYS_sched_get_priority_min, SCHED_RR), 1);
    EXPECT_EQ(ret(SYS_sched_get_priority_max, SCHED_OTHER), 0);
    EXPECT_EQ(ret(SYS_sched_get_priority_min, SCHED_BATCH), 0);
    EXPECT_EQ(ret(SYS_sched_get_priority_max, 7), -EINVAL);
    EXPECT_EQ(ret(SYS_sched_get_priority_min, uint64_t{0xffffffff}), -EINVAL);
    EXPECT_EQ(ret(SYS_getpid), 1);
    EXPECT_EQ(ret(SYS_set_robust_list, kBuf, 24), 0);
    EXPECT_EQ(ret(SYS_rseq, kBuf, 32, 0, 0), -ENOSYS);
}

TEST_F(Server, FutexAndExit) {
    make(false);
    const uint32_t v = 7;
    std::memcpy(at(kBuf), &v, 4);
    EXPECT_EQ(ret(SYS_futex, kBuf, 0 /* WAIT */, 8), -EAGAIN);
    EXPECT_EQ(ret(SYS_futex, kBuf, 1 /* WAKE */, 1), 0);
    EXPECT_EQ(ret(SYS_futex, kBuf + 1, 1, 1), -EINVAL);
    EXPECT_EQ(ret(SYS_futex, 0, 0, 0), -EFAULT);
    const auto dead = call(SYS_futex, kBuf, 0x80 /* WAIT | PRIVATE */, 7);
    EXPECT_NE(dead.stopped.find("deadlock"), std::string::npos);
    const auto exit = call(SYS_exit_group, 0x1ff);
    EXPECT_TRUE(exit.exited);
    EXPECT_EQ(exit.exit_code, 0xff);
}

TEST_F(Server, CloneChecksFlagsAndWritesTids) {
    make(false);
    constexpr uint64_t kThread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
    constexpr uint64_t kGlibc = kThread | CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    const uint64_t stack = kBuf + 65536, ptid = kBuf + 16, ctid = kBuf + 32;
    EXPECT_EQ(ret(SYS_clone, SIGCHLD, 0, 0, 0, 0), -ENOSYS);                  // fork
    EXPECT_EQ(ret(SYS_clone, CLONE_VM | CLONE_VFORK | SIGCHLD, 0), -EINVAL);  // vfork
    EXPECT_EQ(ret(SYS_clone, kThread | CLONE_NEWNS, stack), -EINVAL);
    EXPECT_EQ(ret(SYS_clone, kThread, 0), -EINVAL);                           // no stack
    EXPECT_EQ(ret(SYS_clone, kThread, kGuard + 4096), -EINVAL);               // the guard
    EXPECT_EQ(ret(SYS_clone, kThread, 1ull << 40), -EINVAL);                  // past RAM
    EXPECT_EQ(ret(SYS_clone, kGlibc, stack, 8, ctid, kBuf), -EFAULT);         // parent_tid on page 0
    EXPECT_EQ(ret(SYS_clone, kGlibc, stack, ptid, ctid, 1ull << 47), -EPERM); // TLS past user space
    EXPECT_EQ(ret(SYS_clone3, kBuf, 88), -ENOSYS);
    cpu.fs_base = 0x1234;
    const auto ok = call(SYS_clone, kGlibc, stack, ptid, ctid, kBuf + 4096);
    ASSERT_TRUE(ok.clone.has_value());
    EXPECT_EQ(ok.ret, 2);
    EXPECT_EQ(ok.clone->tid, 2u);
    EXPECT_EQ(ok.clone->stack, stack);
    EXPECT_EQ(ok.clone->fs_base, kBuf + 4096);
    uint32_t written = 0;
    std::memcpy(&written, at(ptid), 4);
    EXPECT_EQ(written, 2u);
    // Without CLONE_SETTLS the child keeps the caller's FS base; a failed start is forgotten.
    const auto plain = call(SYS_clone, kThread, stack);
    ASSERT_TRUE(plain.clone.has_value());
    EXPECT_EQ(plain.clone->fs_base, 0x1234u);
    server->clone_failed(plain.clone->tid);
    // gettid is the caller's; the exit of thread 2 clears its word.
    SyscallCall g;
    g.nr = SYS_gettid;
    g.tid = 2;
    EXPECT_EQ(server->serve(g, cpu).ret, 2);
    const uint32_t live = 2;
    std::memcpy(at(ctid), &live, 4);
    server->thread_exit(2);
    std::memcpy(&written, at(ctid), 4);
    EXPECT_EQ(written, 0u);
    const auto ex = call(SYS_exit, 3);
    EXPECT_TRUE(ex.thread_exited);
    EXPECT_FALSE(ex.exited);
}

TEST_F(Server, FutexWakesAWaiterOnAnotherThread) {
    make(false);
    constexpr uint64_t kThread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
    ASSERT_TRUE(call(SYS_clone, kThread, kBuf + 65536).clone); // two threads: an untimed wait is no deadlock
    const uint32_t v = 1;
    std::memcpy(at(kBuf), &v, 4);
    int64_t waited = 1;
    std::thread waiter([&] {
        SyscallCall c;
        c.nr = SYS_futex;
        c.arg[0] = kBuf;
        c.arg[1] = FUTEX_WAIT_PRIVATE;
        c.arg[2] = 1;
        CpuState own;
        waited = server->serve(c, own).ret;
    });
    // Wake until the waiter was there to be woken (it may not have started waiting yet).
    int64_t woken = 0;
    for (int i = 0; i < 200 && woken == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        woken = ret(SYS_futex, kBuf, FUTEX_WAKE_PRIVATE, 1);
    }
    waiter.join();
    EXPECT_EQ(woken, 1);
    EXPECT_EQ(waited, 0);
    // Timed: 20 ms relative; an absolute deadline in the past; bitset 0.
    const timespec rel{0, 20'000'000};
    std::memcpy(at(kBuf + 64), &rel, sizeof rel);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(ret(SYS_futex, kBuf, FUTEX_WAIT, 1, kBuf + 64), -ETIMEDOUT);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(19));
    EXPECT_EQ(ret(SYS_futex, kBuf, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 1, kBuf + 64, 0, ~0u), -ETIMEDOUT);
    EXPECT_EQ(ret(SYS_futex, kBuf, FUTEX_WAIT_BITSET, 1, 0, 0, 0), -EINVAL);
    EXPECT_EQ(ret(SYS_futex, kBuf, FUTEX_WAIT, 1, kBuf + 64 + kRam), -EFAULT);
    EXPECT_EQ(ret(SYS_futex, kBuf, FUTEX_WAKE_OP, 1), -ENOSYS);
    EXPECT_EQ(ret(SYS_futex, kBuf, FUTEX_CMP_REQUEUE, 1, 1, kBuf + 2, 1), -EINVAL);
    EXPECT_EQ(ret(SYS_futex, kBuf, FUTEX_CMP_REQUEUE, 1, 1, kBuf + 8, 9), -EAGAIN);
    // The VM ending releases a waiter within a slice.
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        server->request_stop();
    });
    EXPECT_EQ(ret(SYS_futex, kBuf, FUTEX_WAIT, 1), -EINTR);
    stopper.join();
}

TEST_F(Server, TimeAndRandom) {
    make(false);
    EXPECT_EQ(ret(SYS_clock_gettime, 1, kBuf), 0);
    EXPECT_EQ(ret(SYS_clock_gettime, 99, kBuf), -EINVAL);
    EXPECT_EQ(ret(SYS_clock_gettime, 1, 0), -EFAULT);
    EXPECT_EQ(ret(SYS_gettimeofday, kBuf, 0), 0);
    EXPECT_GT(ret(SYS_time, 0), 1700000000);
    const int64_t bad_req[2] = {0, 2000000000};
    std::memcpy(at(kBuf), bad_req, 16);
    EXPECT_EQ(ret(SYS_nanosleep, kBuf, 0), -EINVAL);
    const int64_t tiny[2] = {0, 1000};
    std::memcpy(at(kBuf), tiny, 16);
    EXPECT_EQ(ret(SYS_nanosleep, kBuf, 0), 0);
    EXPECT_EQ(ret(SYS_getrandom, kBuf, 33, 0), 33);
    std::vector<uint8_t> first(at(kBuf), at(kBuf) + 33);
    EXPECT_EQ(ret(SYS_getrandom, kBuf, 1ull << 40, 0), -EFAULT);
    EXPECT_EQ(ret(SYS_getrandom, kBuf, 8, 0x100), -EINVAL);
    make(false); // same seed: same bytes
    EXPECT_EQ(ret(SYS_getrandom, kBuf, 33, 0), 33);
    EXPECT_EQ(std::vector<uint8_t>(at(kBuf), at(kBuf) + 33), first);
}

// Without --seed, getrandom is the host's: two runs (servers) never agree
// (a chance of 2^-256 for 32 bytes), so canaries differ from run to run.
TEST_F(Server, UnseededRandomComesFromTheHost) {
    options.seed.reset();
    make(false);
    EXPECT_EQ(ret(SYS_getrandom, kBuf, 32, 0), 32);
    const std::vector<uint8_t> first(at(kBuf), at(kBuf) + 32);
    make(false);
    EXPECT_EQ(ret(SYS_getrandom, kBuf, 32, 0), 32);
    EXPECT_NE(std::vector<uint8_t>(at(kBuf), at(kBuf) + 32), first);
}

TEST_F(Server, UnknownCallsAreEnosysAndCounted) {
    make(false);
    EXPECT_EQ(ret(SYS_fork), -ENOSYS);
    EXPECT_EQ(ret(SYS_fork), -ENOSYS);
    EXPECT_EQ(ret(100000), -ENOSYS);
    EXPECT_EQ(ret(SYS_getpid), 1);
    EXPECT_EQ(server->counters().total, 4u);
    EXPECT_EQ(server->counters().not_served, 3u);
    EXPECT_EQ(server->counters().calls[SYS_fork], 2u);
    const std::string r = server->report();
    EXPECT_NE(r.find("4 system calls"), std::string::npos) << r;
    EXPECT_NE(r.find("fork 2"), std::string::npos) << r;
    EXPECT_NE(r.find("other 1"), std::string::npos) << r;
    EXPECT_EQ(syscall_name(SYS_getpid), "getpid");
    EXPECT_EQ(syscall_name(100000), "syscall 100000");
}

} // namespace
} // namespace kvmgpu::linux_abi
