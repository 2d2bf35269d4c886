// The vCPU seccomp filter (kvmtool-gpu/vmm/vcpu_seccomp.h) without KVM: each
// test forks, confines a thread of the child, and looks at how the child
// ended. A pipe stands in for the vCPU fd. Nothing here confines the test
// process itself.
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kvmtool-gpu/kvm/xsave_ioctls.h"
#include "kvmtool-gpu/vmm/linux/share_fs.h"
#include "kvmtool-gpu/vmm/linux/syscall_server.h"
#include "kvmtool-gpu/vmm/vcpu_seccomp.h"
#include "memmap/backing.h"

namespace kvmgpu {
namespace {

// Runs body() in a child process after confining the child's (only) thread
// with the vCPU fd `fd`; returns the raw wait status. The child exits 0 when
// body returns. `vm_fd` plays the VM fd; `before` runs in the child
// unconfined, as a VMM sets up before its vCPU thread confines itself (guest
// RAM is MADV_DONTFORK: a child makes its own).
int in_confined_child(int fd, const std::function<void()>& body, bool linux_guest = false, int vm_fd = -1,
                      const std::function<void()>& before = {}) {
    const pid_t pid = fork();
    if (pid == 0) {
        const rlimit no_core{0, 0}; // SIGSYS dumps core by default
        setrlimit(RLIMIT_CORE, &no_core);
        if (before) before();
        try {
            confine_vcpu_thread(fd, linux_guest, vm_fd);
        } catch (...) {
            _exit(99);
        }
        body();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

std::string describe(int status) {
    if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
    return "status " + std::to_string(status);
}

bool killed_by_sigsys(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS; }

struct VcpuSeccomp : ::testing::Test {
    int fds[2] = {-1, -1}; // fds[0] plays the vCPU fd
    void SetUp() override { ASSERT_EQ(pipe(fds), 0); }
    void TearDown() override { close(fds[0]), close(fds[1]); }
};

TEST_F(VcpuSeccomp, WhatTheRunLoopNeedsIsAllowed) {
    const int vcpu = fds[0], out = fds[1];
    const int st = in_confined_child(vcpu, [&] {
        // The allocator: small and large (mmap) blocks, growth, release.
        std::vector<std::vector<char>> blocks;
        for (int i = 0; i < 64; ++i) blocks.emplace_back(size_t{1} << (i % 24), 'x');
        blocks.clear();
        void* big = std::malloc(64 << 20);
        std::free(big);
        // Timestamps, futex waits with a time-out, yields, sleeps.
        std::mutex mu;
        std::condition_variable cv;
        std::unique_lock lk(mu);
        cv.wait_for(lk, std::chrono::milliseconds(1));
        lk.unlock();
        std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::microseconds(10));
        (void)std::chrono::steady_clock::now();
        timespec ts;
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts); // not the vDSO
        // Console and log lines, eventfd-style kicks, fstat for stdio.
        if (write(out, "ok", 2) != 2) _exit(2);
        struct stat sb;
        if (fstat(out, &sb) != 0) _exit(3);
        // The vCPU fd's ioctls pass the filter (a pipe answers ENOTTY).
        if (ioctl(vcpu, KVM_RUN, 0) != -1 || errno != ENOTTY) _exit(4);
        kvm_regs regs;
        if (ioctl(vcpu, KVM_GET_REGS, &regs) != -1) _exit(5);
        kvm_sregs sregs{};
        if (ioctl(vcpu, KVM_SET_SREGS, &sregs) != -1 || errno != ENOTTY) _exit(7); // CR3 loads
        char stat_bytes[8];
        if (pread(out, stat_bytes, sizeof stat_bytes, 0) != -1 || errno != ESPIPE) _exit(8); // KVM stats
        // Memory without PROT_EXEC.
        void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED || mprotect(p, 4096, PROT_READ) != 0 || munmap(p, 4096) != 0) _exit(6);
    });
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << describe(st);
    char buf[2] = {};
    EXPECT_EQ(read(fds[0], buf, 2), 2);
}

// Every forbidden call is its own child: the first one kills it.
TEST_F(VcpuSeccomp, EverythingElseKillsTheProcessWithSigsys) {
    const int vcpu = fds[0], other = fds[1];
    const std::vector<std::pair<const char*, std::function<void()>>> attempts = {
        {"openat", [] { open("/proc/self/status", O_RDONLY); }},
        {"socket", [] { socket(AF_INET, SOCK_STREAM, 0); }},
        {"execve", [] { execl("/bin/true", "true", nullptr); }},
        {"fork", [] { syscall(SYS_fork); }},
        {"clone (a thread)", [] { std::thread([] {}).join(); }},
        {"kill", [] { syscall(SYS_kill, 1, 0); }},
        {"ptrace", [] { syscall(SYS_ptrace, 0, 0, 0, 0); }},
        {"ioctl on another fd", [other] { ioctl(other, KVM_RUN, 0); }},
        {"ioctl KVM_SET_REGS on the vCPU fd", [vcpu] {
             kvm_regs r{};
             ioctl(vcpu, KVM_SET_REGS, &r);
         }},
        {"ioctl KVM_SET_USER_MEMORY_REGION", [vcpu] { ioctl(vcpu, KVM_SET_USER_MEMORY_REGION, nullptr); }},
        {"ioctl KVM_GET_XSAVE (a Linux-ABI guest's only)", [vcpu] { ioctl(vcpu, kGetXsave, nullptr); }},
        {"mmap PROT_EXEC", [] { mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); }},
        {"mprotect PROT_EXEC", [] {
             static char page[4096] __attribute__((aligned(4096)));
             mprotect(page, 4096, PROT_READ | PROT_EXEC);
         }},
        {"newfstatat with a path", [] {
             struct stat sb;
             stat("/", &sb);
         }},
        {"x32 syscall number", [] { syscall(SYS_getpid | 0x40000000); }},
        {"i386 int 0x80", [] {
             long ret;
             asm volatile("int $0x80" : "=a"(ret) : "a"(20) : "memory"); // getpid on i386
         }},
    };
    for (const auto& attempt : attempts) {
        const char* what = attempt.first;
        const std::function<void()>& call = attempt.second; // (clang 14 cannot capture a structured binding)
        const int st = in_confined_child(vcpu, [&call] {
            call();
            _exit(1); // survived: the filter let it through
        });
        // int 0x80 is a SIGSEGV instead where the kernel has no i386 emulation.
        const bool no_ia32 = std::string(what) == "i386 int 0x80" && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
        EXPECT_TRUE(killed_by_sigsys(st) || no_ia32) << what << ": " << describe(st);
    }
}

// A Linux-ABI guest's vCPU also serves its system calls: the share's files
// (through openat2 only) and the return to ring 3 (KVM_SET_REGS) pass;
// plain open/openat and everything else still kill.
TEST_F(VcpuSeccomp, LinuxGuestVcpuReachesTheShareOnlyThroughOpenat2) {
    const int vcpu = fds[0];
    char tmpl[] = "/tmp/kvmgpu-seccomp-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    const int dirfd = open(tmpl, O_PATH | O_DIRECTORY);
    ASSERT_GE(dirfd, 0);
    const int st = in_confined_child(vcpu, [&] {
        open_how how{};
        how.flags = O_RDWR | O_CREAT;
        how.mode = 0600;
        how.resolve = RESOLVE_IN_ROOT;
        const long fd = syscall(SYS_openat2, dirfd, "f", &how, sizeof how);
        if (fd < 0) _exit(2);
        if (pwrite(fd, "x", 1, 0) != 1 || lseek(fd, 0, SEEK_SET) != 0) _exit(3);
        char buf[256];
        if (readlinkat(dirfd, "f", buf, sizeof buf) != -1) _exit(4);
        if (close(fd) != 0) _exit(5);
        how.flags = O_RDONLY | O_DIRECTORY;
        how.mode = 0; // only with O_CREAT
        const long d = syscall(SYS_openat2, dirfd, ".", &how, sizeof how);
        if (d < 0 || syscall(SYS_getdents64, d, buf, sizeof buf) <= 0) _exit(6);
        kvm_regs r{};
        if (ioctl(vcpu, KVM_SET_REGS, &r) != -1 || errno != ENOTTY) _exit(7);
        KvmXsaveArea x{}; // signal frames' XSAVE state
        if (ioctl(vcpu, kGetXsave, &x) != -1 || errno != ENOTTY) _exit(10);
        if (ioctl(vcpu, kSetXsave, &x) != -1 || errno != ENOTTY) _exit(11);
        if (syscall(SYS_getrandom, buf, 16, 0) != 16) _exit(8); // the guest's getrandom without --seed
        // glibc's own read-only opens on this thread (get_nprocs, message catalogs).
        const int own = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        if (own < 0) _exit(9);
        close(own);
    }, true);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << describe(st);
    for (const auto& [what, call] : std::vector<std::pair<const char*, std::function<void()>>>{
             {"openat for writing", [dir] { open((dir + "/w").c_str(), O_WRONLY | O_CREAT, 0600); }},
             {"openat O_RDWR", [] { open("/proc/self/status", O_RDWR); }},
             {"execve", [] { execl("/bin/true", "true", nullptr); }},
             {"ioctl KVM_SET_USER_MEMORY_REGION", [vcpu] { ioctl(vcpu, KVM_SET_USER_MEMORY_REGION, nullptr); }},
             {"ioctl KVM_SET_XCRS", [vcpu] { ioctl(vcpu, KVM_SET_XCRS, nullptr); }}}) {
        const std::function<void()>& c = call;
        const int killed = in_confined_child(vcpu, [&c] { c(), _exit(1); }, true);
        EXPECT_TRUE(killed_by_sigsys(killed)) << what << ": " << describe(killed);
    }
    // Without a Linux-ABI guest, openat2 is not allowed.
    const int project = in_confined_child(vcpu, [&] {
        open_how how{};
        how.flags = O_RDONLY;
        syscall(SYS_openat2, dirfd, ".", &how, sizeof how);
        _exit(1);
    });
    EXPECT_TRUE(killed_by_sigsys(project)) << describe(project);
    close(dirfd);
    std::filesystem::remove_all(dir);
}

// The share's tree calls as a Linux-ABI guest's vCPU serves them, under its
// filter: each host call they make must be one the filter allows (glibc's
// renameat2 issues renameat when flags are 0, which it does not).
TEST_F(VcpuSeccomp, TheSharesTreeCallsPassTheFilter) {
    char tmpl[] = "/tmp/kvmgpu-seccomp-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const linux_abi::ShareRoot share(tmpl, false);
    const int st = in_confined_child(fds[0], [&] {
        if (share.mkdir(-1, "d", 0700) != 0) _exit(2);
        const int fd = share.open(-1, "d/f", O_RDWR | O_CREAT, 0600);
        if (fd < 0) _exit(3);
        close(fd);
        if (share.rename(-1, "d/f", -1, "d/g", 0) != 0) _exit(4);
        if (share.rename(-1, "d/g", -1, "d/h", RENAME_NOREPLACE) != 0) _exit(5);
        if (share.unlink(-1, "d/h", false) != 0 || share.unlink(-1, "d", true) != 0) _exit(6);
    }, true);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << describe(st);
    std::filesystem::remove_all(tmpl);
}

// The file window (vmm/linux/file_window.h): a Linux-ABI guest's vCPU sets
// memory slots on the VM fd and maps the guest's files privately; no other
// ioctl on the VM fd, no slot ioctl on another fd, no shared file mapping.
TEST_F(VcpuSeccomp, LinuxGuestVcpuSetsSlotsOnTheVmFdAndMapsFilesOnlyPrivately) {
    const int vcpu = fds[0], vm = fds[1];
    char tmpl[] = "/tmp/kvmgpu-seccomp-map-XXXXXX";
    const int file = mkstemp(tmpl);
    ASSERT_GE(file, 0);
    ASSERT_EQ(ftruncate(file, 4096), 0);
    const int st = in_confined_child(vcpu, [&] {
        kvm_userspace_memory_region r{};
        if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &r) != -1 || errno != ENOTTY) _exit(2);
        void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, file, 0);
        if (p == MAP_FAILED || munmap(p, 4096) != 0) _exit(3);
    }, true, vm);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << describe(st);
    for (const auto& [what, call] : std::vector<std::pair<const char*, std::function<void()>>>{
             {"ioctl KVM_RUN on the VM fd", [vm] { ioctl(vm, KVM_RUN, 0); }},
             {"ioctl KVM_SET_USER_MEMORY_REGION on the vCPU fd",
              [vcpu] { ioctl(vcpu, KVM_SET_USER_MEMORY_REGION, nullptr); }},
             {"mmap MAP_SHARED of a file", [file] { mmap(nullptr, 4096, PROT_READ, MAP_SHARED, file, 0); }},
             {"mmap MAP_SHARED_VALIDATE of a file", [file] { mmap(nullptr, 4096, PROT_READ, 0x03, file, 0); }},
             {"mmap PROT_EXEC of a file", [file] { mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0); }}}) {
        const std::function<void()>& c = call;
        const int killed = in_confined_child(vcpu, [&c] { c(), _exit(1); }, true, vm);
        EXPECT_TRUE(killed_by_sigsys(killed)) << what << ": " << describe(killed);
    }
    // A project image's vCPU: the VM fd gets nothing.
    const int project = in_confined_child(vcpu, [vm] {
        ioctl(vm, KVM_SET_USER_MEMORY_REGION, nullptr);
        _exit(1);
    }, false, vm);
    EXPECT_TRUE(killed_by_sigsys(project)) << describe(project);
    close(file);
    unlink(tmpl);
}

// The guest's working directory as the system-call server keeps it, under
// the Linux-ABI vCPU's filter: chdir, fchdir, getcwd, a relative open, and
// following a cwd whose directory was renamed (its host path read back
// through /proc/self/fd) use only calls the filter allows.
TEST_F(VcpuSeccomp, TheGuestsCwdCallsPassTheFilter) {
    char tmpl[] = "/tmp/kvmgpu-seccomp-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::filesystem::path dir = tmpl;
    std::filesystem::create_directories(dir / "sub" / "deeper");
    constexpr uint64_t kRam = 32ull << 20, kBuf = 20ull << 20, kGuard = 28ull << 20;
    memmap::GuestMemory mem;
    std::unique_ptr<linux_abi::SyscallServer> server;
    const auto make_server = [&] { // in the child, before the filter
        mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, kRam));
        linux_abi::ProcessLayout l;
        l.managed_lo = 1ull << 20, l.managed_hi = kGuard, l.brk_start = 8ull << 20;
        l.stack_lo = 30ull << 20, l.stack_top = kRam;
        linux_abi::ServerOptions o;
        o.share = std::make_shared<linux_abi::GuestFs>(std::vector<linux_abi::MountSpec>{{"/", dir.string(), false}});
        o.cwd = "/sub";
        server = std::make_unique<linux_abi::SyscallServer>(mem, l, o);
        if (!server->address_space().map_fixed(kBuf, 1ull << 20, false)) _exit(10);
        std::filesystem::rename(dir / "sub", dir / "moved"); // the server follows it under the filter
    };
    auto put = [&](const char* s) { mem.write(memmap::GuestPhysAddr{kBuf}, s, std::strlen(s) + 1); };
    auto call = [&](uint64_t nr, uint64_t a0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0) {
        linux_abi::SyscallCall c;
        c.nr = nr;
        c.arg[0] = a0, c.arg[1] = a1, c.arg[2] = a2, c.arg[3] = a3;
        linux_abi::CpuState cpu;
        return server->serve(c, cpu).ret;
    };
    const int st = in_confined_child(fds[0], [&] {
        if (call(SYS_getcwd, kBuf, 4096) != 7) _exit(2); // "/moved"
        put("deeper");
        if (call(SYS_chdir, kBuf) != 0) _exit(3);
        put("..");
        const int64_t up = call(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY | O_DIRECTORY);
        if (up < 3) _exit(4);
        if (call(SYS_fchdir, up) != 0) _exit(5);
        put("new.txt");
        if (call(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_WRONLY | O_CREAT, 0600) < 3) _exit(6);
        put("/proc/self/cwd");
        if (call(SYS_readlink, kBuf, kBuf + 100, 100) != 6) _exit(7);
    }, true, -1, make_server);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << describe(st);
    EXPECT_TRUE(std::filesystem::exists(dir / "moved" / "new.txt"));
    std::filesystem::remove_all(dir);
}

TEST_F(VcpuSeccomp, OnlyTheCallingThreadIsConfinedAndItExitsCleanly) {
    const pid_t pid = fork();
    if (pid == 0) {
        // A thread that exists before, and a thread that confines itself,
        // does a little, and ends (thread exit must pass the filter). Only
        // once it is gone does the other thread try something forbidden.
        std::mutex mu;
        std::condition_variable cv;
        bool vcpu_gone = false;
        std::thread before([&] {
            std::unique_lock lk(mu);
            cv.wait(lk, [&] { return vcpu_gone; });
            const int fd = open("/proc/self/status", O_RDONLY); // unconfined: allowed
            _exit(fd >= 0 ? 0 : 3);
        });
        std::thread vcpu([&] {
            try {
                confine_vcpu_thread(fds[0]);
            } catch (...) {
                _exit(99);
            }
            std::vector<char> work(1 << 20, 'x'); // the allocator, then thread exit
        });
        vcpu.join();
        {
            std::lock_guard lk(mu);
            vcpu_gone = true;
        }
        cv.notify_all();
        before.join();
        _exit(4);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << describe(st);
}

TEST(VcpuSeccompProgram, IsSmallAndEndsInTheReportedRefusal) {
    const auto p = vcpu_seccomp_program(7);
    EXPECT_LT(p.size(), 128u); // BPF_MAXINSNS is 4096; short filters cost little per syscall
    EXPECT_EQ(p.back().code, BPF_RET | BPF_K);
    EXPECT_EQ(p.back().k, static_cast<uint32_t>(SECCOMP_RET_TRAP));
}

// A refused call is named on stderr (with its first arguments) before the
// process ends with SIGSYS, so a user sees which call a guest drove the VMM to.
TEST_F(VcpuSeccomp, ARefusedCallIsNamedBeforeTheProcessEnds) {
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    const pid_t pid = fork();
    if (pid == 0) {
        const rlimit no_core{0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        dup2(out[1], STDERR_FILENO);
        confine_vcpu_thread(fds[0], true);
        syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
        _exit(1); // survived
    }
    close(out[1]);
    std::string text;
    char buf[512];
    for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    close(out[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT_TRUE(killed_by_sigsys(st)) << describe(st);
    EXPECT_NE(text.find("refused system call socket (0x29, arguments 0x2 0x1 0x0)"), std::string::npos) << text;
}

} // namespace
} // namespace kvmgpu
