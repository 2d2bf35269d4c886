// The /proc files the VMM makes up from the guest's state: /proc/self/maps
// follows brk and mmap, /proc/meminfo the allocator, /proc/cpuinfo the
// guest's CPUID (the host's where none is given); none can be written. /proc/self/fd: a directory of the
// guest's descriptors, whose links name what each was opened as.
#include <cpuid.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kvmtool-gpu/vmm/linux/guest_proc_text.h"
#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

struct ProcFiles : Server {
    // The whole file, read through the guest's calls.
    std::string read_file(const char* path) {
        put(kBuf, path);
        const int64_t fd = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY);
        EXPECT_GE(fd, 3) << path;
        if (fd < 0) return "";
        std::string text;
        for (;;) {
            const int64_t n = ret(SYS_read, fd, kBuf + 4096, 4096);
            if (n <= 0) break;
            text.append(reinterpret_cast<char*>(at(kBuf + 4096)), static_cast<size_t>(n));
        }
        EXPECT_EQ(ret(SYS_close, fd), 0);
        return text;
    }
    static bool has_line(const std::string& text, const std::string& line) {
        return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
    }
};

TEST_F(ProcFiles, MapsFollowsTheProgramHeapMappingsAndStack) {
    make(false);
    // The fixture's layout names no images: give the server a program
    // (reserved) and a vDSO outside the managed range, as LinuxProcess does.
    server.reset();
    ProcessLayout l = layout();
    l.images = {{1 * kMiB, 8 * kMiB, "rwxp", "/usr/bin/prog"}, {0xF3000, 0xF4000, "r-xp", "[vdso]"}};
    ServerOptions o = options;
    o.console_text = [](std::string_view) {};
    server = std::make_unique<SyscallServer>(mem, l, o);
    server->address_space().reserve(1 * kMiB, 8 * kMiB);
    ASSERT_TRUE(server->address_space().map_fixed(kBuf, kMiB, false));

    EXPECT_EQ(ret(SYS_brk, 8 * kMiB + 3 * 4096 + 1), static_cast<int64_t>(8 * kMiB + 3 * 4096 + 1));
    const int64_t anon = ret(SYS_mmap, 0, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                             static_cast<uint64_t>(-1), 0);
    ASSERT_GT(anon, 0);
    std::string maps = read_file("/proc/self/maps");
    EXPECT_TRUE(has_line(maps, "000f3000-000f4000 r-xp 00000000 00:00 0                                  [vdso]"))
        << maps;
    EXPECT_NE(maps.find("00100000-00800000 rwxp 00000000 00:00 0"), std::string::npos) << maps;
    EXPECT_NE(maps.find("/usr/bin/prog\n"), std::string::npos);
    EXPECT_NE(maps.find("00800000-00804000 rwxp 00000000 00:00 0"), std::string::npos) << maps;
    EXPECT_NE(maps.find("[heap]\n"), std::string::npos);
    EXPECT_NE(maps.find("01e00000-02000000 rwxp"), std::string::npos) << maps; // the stack
    EXPECT_NE(maps.find("[stack]\n"), std::string::npos);
    char line[64];
    std::snprintf(line, sizeof line, "%08llx-%08llx rwxp 00000000 00:00 0\n", static_cast<unsigned long long>(anon),
                  static_cast<unsigned long long>(anon + 2 * 4096));
    EXPECT_NE(maps.find(line), std::string::npos) << maps;
    EXPECT_NE(maps.find("01400000-01500000 rwxp"), std::string::npos) << maps; // the fixture's kBuf mapping
    // In address order: the vDSO first, the stack last.
    EXPECT_LT(maps.find("[vdso]"), maps.find("/usr/bin/prog"));
    EXPECT_LT(maps.find("[heap]"), maps.find("[stack]"));

    // Unmapped pages leave the listing: the anonymous mapping, and program
    // pages the guest gave back.
    EXPECT_EQ(ret(SYS_munmap, static_cast<uint64_t>(anon), 2 * 4096), 0);
    EXPECT_EQ(ret(SYS_munmap, 1 * kMiB, 4096), 0);
    maps = read_file("/proc/self/maps");
    EXPECT_EQ(maps.find(line), std::string::npos) << maps;
    EXPECT_NE(maps.find("00101000-00800000 rwxp"), std::string::npos) << maps;

    put(kBuf, "/proc/self/maps");
    EXPECT_EQ(ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_WRONLY), -EACCES);
    EXPECT_EQ(ret(SYS_access, kBuf, W_OK), -EACCES);
    EXPECT_EQ(ret(SYS_access, kBuf, R_OK), 0);
}

TEST_F(ProcFiles, MeminfoIsTheGuestsRamAndTheAllocatorsFreePages) {
    make(false);
    const uint64_t free_before = server->address_space().free_bytes();
    std::string info = read_file("/proc/meminfo");
    EXPECT_TRUE(has_line(info, "MemTotal:          32768 kB")) << info;
    EXPECT_TRUE(has_line(info, "MemFree:        " + std::string(8 - std::to_string(free_before / 1024).size(), ' ') +
                                   std::to_string(free_before / 1024) + " kB"))
        << info;
    EXPECT_NE(info.find("MemAvailable:"), std::string::npos);
    // An mmap takes 1 MiB from what is free.
    ASSERT_GT(ret(SYS_mmap, 0, kMiB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, static_cast<uint64_t>(-1), 0), 0);
    info = read_file("/proc/meminfo");
    EXPECT_NE(info.find(" " + std::to_string(free_before / 1024 - 1024) + " kB"), std::string::npos) << info;
    put(kBuf, "/proc/meminfo");
    EXPECT_EQ(ret(SYS_stat, kBuf, kBuf + 4096), 0);
}

// Read by programs that check for a debugger (ggml's abort path reads
// TracerPid and would fault on a file that is not there).
TEST_F(ProcFiles, StatusIsTheOneProcessUntraced) {
    make(false);
    for (const char* path : {"/proc/self/status", "/proc/1/status", "/proc/thread-self/status"}) {
        const std::string status = read_file(path);
        EXPECT_TRUE(has_line(status, "TracerPid:\t0")) << path << "\n" << status;
        EXPECT_TRUE(has_line(status, "Pid:\t1")) << status;
        EXPECT_TRUE(has_line(status, "Threads:\t1")) << status;
        EXPECT_NE(status.find("VmRSS:\t"), std::string::npos) << status;
    }
    put(kBuf, "/proc/self/status");
    EXPECT_EQ(ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_WRONLY), -EACCES);
    EXPECT_EQ(status_text("/usr/bin/a-very-long-program-name", 3, 8192).substr(0, 22), "Name:\ta-very-long-pro\n");
}

TEST_F(ProcFiles, CpuinfoIsProcessorZeroWithTheHostsVendorAndFlags) {
    make(false);
    const std::string info = read_file("/proc/cpuinfo");
    EXPECT_TRUE(has_line(info, "processor\t: 0")) << info;
    EXPECT_EQ(info.find("processor\t: 1"), std::string::npos);
    uint32_t a, b, c, d;
    ASSERT_TRUE(__get_cpuid(0, &a, &b, &c, &d));
    char vendor[13] = {};
    std::memcpy(vendor, &b, 4);
    std::memcpy(vendor + 4, &d, 4);
    std::memcpy(vendor + 8, &c, 4);
    EXPECT_TRUE(has_line(info, std::string("vendor_id\t: ") + vendor)) << info;
    ASSERT_TRUE(__get_cpuid(1, &a, &b, &c, &d));
    const auto flags_at = info.find("\nflags\t\t: ");
    ASSERT_NE(flags_at, std::string::npos);
    const std::string flags = info.substr(flags_at + 10, info.find('\n', flags_at + 1) - flags_at - 10) + " ";
    EXPECT_EQ(flags.find("sse2 ") != std::string::npos, (d >> 26 & 1) != 0) << flags;
    EXPECT_EQ(flags.find("avx ") != std::string::npos, (c >> 28 & 1) != 0) << flags;
    EXPECT_EQ(flags.find("popcnt ") != std::string::npos, (c >> 23 & 1) != 0) << flags;
    EXPECT_NE(info.find("model name\t: "), std::string::npos);
}

// With the guest's CPUID given, its flags are the guest's: AVX as the
// guest's leaf 1 says, AMX gone where its leaf 7 lacks it; OSXSAVE, which
// Linux does not show, never.
TEST_F(ProcFiles, CpuinfoFlagsAreTheGuestsCpuid) {
    kvm_cpuid_entry2 leaf1{}, leaf7{};
    leaf1.function = 1;
    leaf1.ecx = (1u << 27) | (1u << 23); // OSXSAVE, POPCNT; no AVX
    leaf1.edx = 1u << 26;                // SSE2
    leaf7.function = 7;
    leaf7.ebx = 1u << 5; // AVX2
    options.cpuid = {leaf1, leaf7};
    make(false);
    const std::string info = read_file("/proc/cpuinfo");
    const auto flags_at = info.find("\nflags\t\t: ");
    ASSERT_NE(flags_at, std::string::npos);
    const std::string flags = info.substr(flags_at + 10, info.find('\n', flags_at + 1) - flags_at - 10);
    EXPECT_EQ(flags, "sse2 popcnt avx2");
}

TEST(ProcText, MapsLinesAreSortedAndSkipEmptyRanges) {
    const std::string text = maps_text({{0x3000, 0x4000, "rw-p", "[stack]"},
                                        {0x5000, 0x5000, "rw-p", "empty"},
                                        {0x1000, 0x2000, "r-xp", ""}});
    EXPECT_EQ(text, "00001000-00002000 r-xp 00000000 00:00 0\n"
                    "00003000-00004000 rw-p 00000000 00:00 0                                  [stack]\n");
}

} // namespace
} // namespace kvmgpu::linux_abi

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

struct ProcFd : Server {
    // The names getdents64 gives for `fd`, in order, reading `chunk` bytes a call.
    std::vector<std::string> names(int64_t fd, uint64_t chunk) {
        std::vector<std::string> out;
        for (;;) {
            const int64_t n = ret(SYS_getdents64, fd, kBuf + 8192, chunk);
            EXPECT_GE(n, 0);
            if (n <= 0) break;
            for (int64_t off = 0; off < n;) {
                const uint8_t* d = at(kBuf + 8192 + off);
                uint16_t reclen;
                std::memcpy(&reclen, d + 16, 2);
                out.emplace_back(reinterpret_cast<const char*>(d + 19));
                off += reclen;
            }
        }
        return out;
    }
    std::string link(const std::string& path) {
        put(kBuf, path);
        const int64_t n = ret(SYS_readlink, kBuf, kBuf + 4096, 256);
        if (n < 0) return "errno " + std::to_string(-n);
        return std::string(reinterpret_cast<char*>(at(kBuf + 4096)), static_cast<size_t>(n));
    }
};

TEST_F(ProcFd, TheDirectoryListsTheGuestsOwnDescriptors) {
    make(true);
    put(kBuf, "/sub/a");
    const int64_t file = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY);
    ASSERT_EQ(file, 3);
    put(kBuf, "/proc/self/fd");
    const int64_t dir = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY | O_DIRECTORY);
    ASSERT_EQ(dir, 4);
    const std::vector<std::string> want = {".", "..", "0", "1", "2", "3", "4"};
    EXPECT_EQ(names(dir, 4096), want);
    // Again from the start (rewinddir), a few bytes a call: the same list.
    EXPECT_EQ(ret(SYS_lseek, dir, 0, SEEK_SET), 0);
    EXPECT_EQ(names(dir, 32), want);
    EXPECT_EQ(ret(SYS_lseek, dir, 0, SEEK_SET), 0);
    EXPECT_EQ(ret(SYS_getdents64, dir, kBuf + 8192, 8), -EINVAL); // not one entry fits
    EXPECT_EQ(ret(SYS_getdents64, dir, kGuard - 8, 64), -EFAULT);
    // A descriptor closed after the listing began is not listed later; one opened is.
    ASSERT_EQ(ret(SYS_close, file), 0);
    EXPECT_EQ(names(dir, 4096), (std::vector<std::string>{".", "..", "0", "1", "2", "4"}));
    // stat says directory; writing it is refused.
    put(kBuf, "/proc/self/fd");
    ASSERT_EQ(ret(SYS_stat, kBuf, kBuf + 4096), 0);
    struct stat st;
    std::memcpy(&st, at(kBuf + 4096), sizeof st);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_WRONLY), -EISDIR);
    put(kBuf, "/proc/self/exe");
    EXPECT_EQ(ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY | O_DIRECTORY), -ENOTDIR);
}

TEST_F(ProcFd, LinksNameWhatTheGuestOpened) {
    make(true);
    put(kBuf, "/sub");
    const int64_t sub = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY | O_DIRECTORY);
    ASSERT_EQ(sub, 3);
    put(kBuf, "a");
    ASSERT_EQ(ret(SYS_openat, sub, kBuf, O_RDONLY), 4); // relative to /sub
    put(kBuf, "/dev/null");
    ASSERT_EQ(ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY), 5);
    EXPECT_EQ(link("/proc/self/fd/3"), "/sub");
    EXPECT_EQ(link("/proc/self/fd/4"), "/sub/a");
    EXPECT_EQ(link("/dev/fd/4"), "/sub/a");
    EXPECT_EQ(link("/proc/self/fd/5"), "/dev/null");
    EXPECT_EQ(link("/proc/self/fd/1"), "/dev/console");
    EXPECT_EQ(link("/proc/self/fd/9"), "errno " + std::to_string(ENOENT));
    EXPECT_EQ(link("/dev/fd"), "/proc/self/fd");
    EXPECT_EQ(link("/dev/stdout"), "/proc/self/fd/1");
    EXPECT_EQ(link("/proc/self/fd"), "errno " + std::to_string(EINVAL));
    ASSERT_EQ(ret(SYS_eventfd2, 0, 0), 6);
    EXPECT_EQ(link("/proc/self/fd/6"), "anon_inode:[eventfd]");
    ASSERT_EQ(ret(SYS_epoll_create1, 0), 7);
    EXPECT_EQ(link("/proc/self/fd/7"), "anon_inode:[eventpoll]");
}

} // namespace
} // namespace kvmgpu::linux_abi
