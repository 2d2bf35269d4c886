// The /proc files the VMM makes up from the guest's state: /proc/self/maps
// follows brk and mmap, /proc/meminfo the allocator, /proc/cpuinfo the
// host's CPUID; none can be written.
#include <cpuid.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

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

TEST(ProcText, MapsLinesAreSortedAndSkipEmptyRanges) {
    const std::string text = maps_text({{0x3000, 0x4000, "rw-p", "[stack]"},
                                        {0x5000, 0x5000, "rw-p", "empty"},
                                        {0x1000, 0x2000, "r-xp", ""}});
    EXPECT_EQ(text, "00001000-00002000 r-xp 00000000 00:00 0\n"
                    "00003000-00004000 rw-p 00000000 00:00 0                                  [stack]\n");
}

} // namespace
} // namespace kvmgpu::linux_abi
