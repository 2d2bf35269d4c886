// The VMM's own limits as a guest meets them: a share write past the
// process's file-size limit is EFBIG for the guest (the VMM ignores
// SIGXFSZ, util/process_limits.h), and a guest's descriptor table ends in
// EMFILE at its own limit, which prlimit reports.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <gtest/gtest.h>

#include "kvmtool-gpu/util/process_limits.h"
#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

// In a child process: a finite `ulimit -f` there only.
TEST_F(Server, ShareWritePastTheFileSizeLimitIsEfbigNotADeadVmm) {
    // Guest RAM is kept from forks (memmap/fork_sharing.h): the death test's
    // child runs the test again from its start instead of forking into it.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    make(true);
    put(kBuf, "big.bin");
    std::memset(at(kBuf + 4096), 'x', 8192);
    const auto write_past_the_limit = [&] {
        ignore_file_size_signal();
        const rlimit small{4096, 4096};
        if (setrlimit(RLIMIT_FSIZE, &small) != 0) _exit(3);
        const int64_t fd = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_WRONLY | O_CREAT, 0644);
        if (fd < 0) _exit(4);
        if (ret(SYS_write, fd, kBuf + 4096, 8192) != 4096) _exit(5); // up to the limit
        _exit(ret(SYS_write, fd, kBuf + 4096, 8192) == -EFBIG ? 0 : 6);
    };
    EXPECT_EXIT(write_past_the_limit(), ::testing::ExitedWithCode(0), "");
}

TEST_F(Server, GuestDescriptorsEndAtTheirOwnLimit) {
    options.max_fds = 8;
    make(true);
    put(kBuf, "in.txt");
    for (int fd = 3; fd < 8; ++fd) EXPECT_EQ(ret(SYS_open, kBuf, O_RDONLY), fd);
    EXPECT_EQ(ret(SYS_open, kBuf, O_RDONLY), -EMFILE);
    EXPECT_EQ(ret(SYS_dup, 1), -EMFILE);
    EXPECT_EQ(ret(SYS_dup2, 1, 8), -EBADF);
    EXPECT_EQ(ret(SYS_fcntl, 1, F_DUPFD, 8), -EINVAL);
    EXPECT_EQ(ret(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, kBuf + 64), 0);
    uint64_t lim[2];
    std::memcpy(lim, at(kBuf + 64), sizeof lim);
    EXPECT_EQ(lim[0], 8u);
    EXPECT_EQ(lim[1], 8u);
    EXPECT_EQ(server->fds().limit(), 8);
}

} // namespace
} // namespace kvmgpu::linux_abi
