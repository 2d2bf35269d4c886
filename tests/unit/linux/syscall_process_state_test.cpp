// statx, sysinfo, sched_setaffinity, prctl and sigaltstack: what each
// returns, what each records per thread, and hostile pointers and values.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

SyscallOutcome call_as(Server& s, uint32_t tid, uint64_t nr, uint64_t a0, uint64_t a1) {
    SyscallCall c;
    c.nr = nr;
    c.tid = tid;
    c.arg[0] = a0;
    c.arg[1] = a1;
    return s.server->serve(c, s.cpu);
}

TEST_F(Server, StatxFillsWhatNewfstatatGives) {
    make(true);
    put(kBuf, "in.txt");
    struct statx sx {};
    std::memset(at(kBuf + 4096), 0xAA, sizeof sx);
    ASSERT_EQ(ret(SYS_statx, static_cast<uint64_t>(-100), kBuf, 0, STATX_BASIC_STATS, kBuf + 4096), 0);
    std::memcpy(&sx, at(kBuf + 4096), sizeof sx);
    struct stat host {};
    ASSERT_EQ(::stat((dir / "in.txt").c_str(), &host), 0);
    EXPECT_EQ(sx.stx_size, 10u);
    EXPECT_EQ(sx.stx_ino, host.st_ino);
    EXPECT_EQ(sx.stx_mode, host.st_mode);
    EXPECT_EQ(sx.stx_mtime.tv_sec, host.st_mtim.tv_sec);
    EXPECT_EQ(sx.stx_mask & STATX_BASIC_STATS, STATX_BASIC_STATS);
    EXPECT_EQ(at(kBuf + 4096)[sizeof sx - 1], 0); // the rest of the struct cleared, not the 0xAA left there
    // A descriptor with AT_EMPTY_PATH, and a made-up file.
    put(kBuf + 100, "");
    EXPECT_EQ(ret(SYS_statx, 1, kBuf + 100, AT_EMPTY_PATH, STATX_BASIC_STATS, kBuf + 4096), 0);
    put(kBuf + 100, "/dev/null");
    ASSERT_EQ(ret(SYS_statx, static_cast<uint64_t>(-100), kBuf + 100, 0, STATX_BASIC_STATS, kBuf + 4096), 0);
    std::memcpy(&sx, at(kBuf + 4096), sizeof sx);
    EXPECT_TRUE(S_ISCHR(sx.stx_mode));
    EXPECT_EQ(sx.stx_rdev_major, 1u);
    EXPECT_EQ(sx.stx_rdev_minor, 3u);
    // The whole 256-byte buffer must be there, even where a struct stat fits.
    EXPECT_EQ(ret(SYS_statx, static_cast<uint64_t>(-100), kBuf, 0, STATX_BASIC_STATS, kGuard - 200), -EFAULT);
    EXPECT_EQ(ret(SYS_statx, static_cast<uint64_t>(-100), kBuf, 0, 0, kRam - 8), -EFAULT);
    EXPECT_EQ(ret(SYS_statx, static_cast<uint64_t>(-100), kBuf, 0x6000, 0, kBuf + 4096), -EINVAL);
    EXPECT_EQ(ret(SYS_statx, static_cast<uint64_t>(-100), kBuf, 0x80000, 0, kBuf + 4096), -EINVAL);
    put(kBuf, "missing");
    EXPECT_EQ(ret(SYS_statx, static_cast<uint64_t>(-100), kBuf, 0, 0, kBuf + 4096), -ENOENT);
}

TEST_F(Server, SysinfoIsTheGuestsRam) {
    make(false);
    ASSERT_EQ(ret(SYS_sysinfo, kBuf), 0);
    struct sysinfo info {};
    std::memcpy(&info, at(kBuf), sizeof info);
    EXPECT_EQ(info.totalram, kRam);
    EXPECT_EQ(info.freeram, server->address_space().free_bytes());
    EXPECT_EQ(info.procs, 1);
    EXPECT_EQ(info.mem_unit, 1u);
    EXPECT_GE(info.uptime, 0);
    EXPECT_EQ(ret(SYS_sysinfo, kGuard - sizeof(struct sysinfo) + 8), -EFAULT);
    EXPECT_EQ(ret(SYS_sysinfo, 0), -EFAULT);
}

TEST_F(Server, SetaffinityTakesAMaskWithCpuZero) {
    make(false);
    std::memset(at(kBuf), 0, 128);
    at(kBuf)[0] = 1;
    EXPECT_EQ(ret(SYS_sched_setaffinity, 0, 8, kBuf), 0);
    EXPECT_EQ(ret(SYS_sched_setaffinity, 1, 128, kBuf), 0);
    at(kBuf)[0] = 0xff; // CPU 0 among others: Linux keeps the CPUs that exist
    EXPECT_EQ(ret(SYS_sched_setaffinity, 0, 8, kBuf), 0);
    at(kBuf)[0] = 2; // CPU 1 only: none the guest has
    EXPECT_EQ(ret(SYS_sched_setaffinity, 0, 8, kBuf), -EINVAL);
    at(kBuf)[0] = 1;
    EXPECT_EQ(ret(SYS_sched_setaffinity, 0, 0, kBuf), -EINVAL);
    EXPECT_EQ(ret(SYS_sched_setaffinity, 7, 8, kBuf), -ESRCH);
    EXPECT_EQ(ret(SYS_sched_setaffinity, 0, 16, kGuard - 8), -EFAULT); // the mask's tail unmapped
    EXPECT_EQ(ret(SYS_sched_setaffinity, 0, 8, 0), -EFAULT);
}

TEST_F(Server, PrctlNamesEachThread) {
    exe = "/bin/true"; // only its guest path matters: /usr/bin/prog
    make(false);
    EXPECT_EQ(call_as(*this, 1, SYS_prctl, PR_GET_NAME, kBuf).ret, 0);
    EXPECT_STREQ(reinterpret_cast<char*>(at(kBuf)), "prog");
    put(kBuf + 100, "worker-with-a-very-long-name");
    EXPECT_EQ(call_as(*this, 2, SYS_prctl, PR_SET_NAME, kBuf + 100).ret, 0);
    std::memset(at(kBuf), 0x55, 16);
    EXPECT_EQ(call_as(*this, 2, SYS_prctl, PR_GET_NAME, kBuf).ret, 0);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(at(kBuf)), 16), std::string("worker-with-a-v\0", 16));
    EXPECT_EQ(call_as(*this, 1, SYS_prctl, PR_GET_NAME, kBuf).ret, 0);
    EXPECT_STREQ(reinterpret_cast<char*>(at(kBuf)), "prog"); // the other thread's name unchanged
    // A name at the end of RAM: a fault only if a byte before its NUL is missing.
    put(kRam - 3, "ab");
    EXPECT_EQ(call_as(*this, 1, SYS_prctl, PR_SET_NAME, kRam - 3).ret, 0);
    std::memcpy(at(kRam - 2), "cd", 2);
    EXPECT_EQ(call_as(*this, 1, SYS_prctl, PR_SET_NAME, kRam - 2).ret, -EFAULT);
    EXPECT_EQ(call_as(*this, 1, SYS_prctl, PR_GET_NAME, kRam - 8).ret, -EFAULT);
    // A thread's name goes with it.
    server->thread_exit(2);
    EXPECT_EQ(call_as(*this, 2, SYS_prctl, PR_GET_NAME, kBuf).ret, 0);
    EXPECT_STREQ(reinterpret_cast<char*>(at(kBuf)), "prog");
    // The options programs use at start-up; the rest refused.
    EXPECT_EQ(ret(SYS_prctl, PR_SET_PDEATHSIG, SIGTERM), 0);
    EXPECT_EQ(ret(SYS_prctl, PR_SET_PDEATHSIG, 65), -EINVAL);
    EXPECT_EQ(ret(SYS_prctl, PR_GET_DUMPABLE), 1);
    EXPECT_EQ(ret(SYS_prctl, PR_SET_DUMPABLE, 0), 0);
    EXPECT_EQ(ret(SYS_prctl, PR_GET_DUMPABLE), 0);
    EXPECT_EQ(ret(SYS_prctl, PR_SET_DUMPABLE, 2), -EINVAL);
    EXPECT_EQ(ret(SYS_prctl, PR_SET_SECCOMP, 2), -EINVAL);
    EXPECT_EQ(ret(SYS_prctl, ~0ull), -EINVAL);
}

struct GuestStack {
    uint64_t sp;
    int32_t flags, pad;
    uint64_t size;
};

TEST_F(Server, SigaltstackIsRecordedPerThread) {
    make(false);
    const uint64_t ss = kBuf, old = kBuf + 64;
    auto read_old = [&] {
        GuestStack g{};
        std::memcpy(&g, at(old), sizeof g);
        return g;
    };
    EXPECT_EQ(call_as(*this, 1, SYS_sigaltstack, 0, old).ret, 0);
    EXPECT_EQ(read_old().flags, SS_DISABLE);
    GuestStack want{kBuf + 8192, 0, 0, 65536};
    std::memcpy(at(ss), &want, sizeof want);
    EXPECT_EQ(call_as(*this, 1, SYS_sigaltstack, ss, old).ret, 0);
    EXPECT_EQ(read_old().flags, SS_DISABLE); // the old value: none yet
    EXPECT_EQ(call_as(*this, 1, SYS_sigaltstack, 0, old).ret, 0);
    EXPECT_EQ(read_old().sp, kBuf + 8192);
    EXPECT_EQ(read_old().size, 65536u);
    EXPECT_EQ(read_old().flags, 0);
    EXPECT_EQ(call_as(*this, 2, SYS_sigaltstack, 0, old).ret, 0);
    EXPECT_EQ(read_old().flags, SS_DISABLE); // another thread has its own
    // Too small, bad flags, bad pointers.
    want.size = 1024;
    std::memcpy(at(ss), &want, sizeof want);
    EXPECT_EQ(call_as(*this, 1, SYS_sigaltstack, ss, 0).ret, -ENOMEM);
    want = {kBuf, 77, 0, 65536};
    std::memcpy(at(ss), &want, sizeof want);
    EXPECT_EQ(call_as(*this, 1, SYS_sigaltstack, ss, 0).ret, -EINVAL);
    EXPECT_EQ(call_as(*this, 1, SYS_sigaltstack, kGuard - 16, 0).ret, -EFAULT);
    EXPECT_EQ(call_as(*this, 1, SYS_sigaltstack, 0, kRam - 16).ret, -EFAULT);
    // SS_DISABLE clears it.
    want = {0, SS_DISABLE, 0, 0};
    std::memcpy(at(ss), &want, sizeof want);
    EXPECT_EQ(call_as(*this, 1, SYS_sigaltstack, ss, old).ret, 0);
    EXPECT_EQ(read_old().size, 65536u);
    EXPECT_EQ(call_as(*this, 1, SYS_sigaltstack, 0, old).ret, 0);
    EXPECT_EQ(read_old().flags, SS_DISABLE);
}

} // namespace
} // namespace kvmgpu::linux_abi
