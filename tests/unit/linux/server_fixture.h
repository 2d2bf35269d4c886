// The system-call server over 32 MiB of guest RAM, for the tests that drive
// its handlers directly: page 0 and [kGuard, 30 MiB) unmapped (the stack
// guard), the stack above it to RAM's end, a scratch mapping at kBuf, and
// optionally a share with in.txt and sub/a.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "kvmtool-gpu/vmm/linux/syscall_server.h"
#include "memmap/backing.h"

namespace kvmgpu::linux_abi::server_fixture {

constexpr uint64_t kMiB = 1ull << 20, kRam = 32 * kMiB;
constexpr uint64_t kBuf = 20 * kMiB;  // a scratch buffer the tests own (in the managed range, mapped below)
constexpr uint64_t kGuard = 28 * kMiB;

// The address space make() gives the server.
inline ProcessLayout layout() {
    ProcessLayout l;
    l.managed_lo = 1 * kMiB;
    l.managed_hi = kGuard;
    l.brk_start = 8 * kMiB;
    l.stack_lo = 30 * kMiB;
    l.stack_top = kRam;
    l.unmapped = {{0, 4096}, {kGuard, 30 * kMiB}};
    return l;
}

// Opens `path` through `fs` (a ShareRoot or a GuestFs) and reads back its
// first bytes, or "errno N".
template <class Fs>
std::string read_via(const Fs& fs, const std::string& path, int dirfd = -1) {
    const int fd = fs.open(dirfd, path, O_RDONLY, 0);
    if (fd < 0) return "errno " + std::to_string(-fd);
    char buf[32] = {};
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    return n >= 0 ? std::string(buf, n) : "read failed";
}

struct Server : ::testing::Test {
    memmap::GuestMemory mem;
    std::unique_ptr<SyscallServer> server;
    std::string console;
    CpuState cpu;
    std::filesystem::path dir;
    ServerOptions options{.seed = 5}; // what make() starts from (a test may change it first)
    std::string exe;                    // ServerOptions::exe_host_path

    void make(bool with_share, bool read_only = false) {
        if (mem.regions().empty())
            mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRam));
        const ProcessLayout l = layout();
        ServerOptions o = options;
        if (!o.console_text) o.console_text = [this](std::string_view t) { console.append(t); };
        o.exe_host_path = exe;
        o.exe_guest_path = "/usr/bin/prog";
        if (with_share) {
            char tmpl[] = "/tmp/kvmgpu-server-XXXXXX";
            ASSERT_NE(mkdtemp(tmpl), nullptr);
            dir = tmpl;
            std::ofstream(dir / "in.txt") << "0123456789";
            std::filesystem::create_directory(dir / "sub");
            std::ofstream(dir / "sub" / "a") << "a";
            o.share = std::make_shared<GuestFs>(std::vector<MountSpec>{{"/", dir, read_only}});
        }
        server = std::make_unique<SyscallServer>(mem, l, o);
        ASSERT_TRUE(server->address_space().map_fixed(kBuf, kMiB, false));
    }
    void TearDown() override {
        if (!dir.empty()) std::filesystem::remove_all(dir);
    }
    SyscallOutcome call(uint64_t nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0,
                        uint64_t a4 = 0, uint64_t a5 = 0) {
        SyscallCall c;
        c.nr = nr;
        const uint64_t a[6] = {a0, a1, a2, a3, a4, a5};
        std::copy(std::begin(a), std::end(a), c.arg);
        return server->serve(c, cpu);
    }
    int64_t ret(uint64_t nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0,
                uint64_t a5 = 0) {
        return call(nr, a0, a1, a2, a3, a4, a5).ret;
    }
    uint8_t* at(uint64_t gpa) { return mem.translate(memmap::GuestPhysAddr{gpa}, 1)->data(); }
    void put(uint64_t gpa, const std::string& s) { std::memcpy(at(gpa), s.c_str(), s.size() + 1); }
};

} // namespace kvmgpu::linux_abi::server_fixture
