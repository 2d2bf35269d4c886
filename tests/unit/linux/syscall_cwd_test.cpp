// The working directory: chdir and fchdir to a directory of a mount, getcwd
// giving it back, and paths relative to AT_FDCWD taken from it (opens,
// stats, mkdir, rename); a file, a missing path or a made-up directory is
// refused and leaves it as it was.
#include <fcntl.h>
#include <sys/syscall.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

struct Cwd : Server {
    std::string cwd() {
        const int64_t n = ret(SYS_getcwd, kBuf + 8192, 4096);
        if (n < 0) return "errno " + std::to_string(-n);
        return reinterpret_cast<const char*>(at(kBuf + 8192));
    }
};

TEST_F(Cwd, RelativePathsFollowTheWorkingDirectory) {
    make(true);
    EXPECT_EQ(cwd(), "/");
    put(kBuf, "sub");
    ASSERT_EQ(ret(SYS_chdir, kBuf), 0);
    EXPECT_EQ(cwd(), "/sub");
    EXPECT_EQ(ret(SYS_getcwd, kBuf + 8192, 4), -ERANGE) << "\"/sub\" and its NUL need 5 bytes";
    put(kBuf, "a");
    const int64_t fd = ret(SYS_open, kBuf, O_RDONLY);
    ASSERT_GE(fd, 3);
    EXPECT_EQ(ret(SYS_read, fd, kBuf + 100, 10), 1);
    EXPECT_EQ(at(kBuf + 100)[0], 'a');
    put(kBuf, "made");
    EXPECT_EQ(ret(SYS_mkdir, kBuf, 0755), 0);
    EXPECT_TRUE(std::filesystem::is_directory(dir / "sub" / "made"));
    put(kBuf, "a");
    put(kBuf + 64, "../moved");
    EXPECT_EQ(ret(SYS_rename, kBuf, kBuf + 64), 0);
    EXPECT_TRUE(std::filesystem::exists(dir / "moved"));
    put(kBuf, "../in.txt");
    EXPECT_EQ(ret(SYS_access, kBuf, 0), 0);
    put(kBuf, "../../../..");
    ASSERT_EQ(ret(SYS_chdir, kBuf), 0);
    EXPECT_EQ(cwd(), "/") << "'..' stops at the guest's root";
    put(kBuf, "/in.txt");
    EXPECT_EQ(ret(SYS_chdir, kBuf), -ENOTDIR);
    put(kBuf, "/none");
    EXPECT_EQ(ret(SYS_chdir, kBuf), -ENOENT);
    put(kBuf, "");
    EXPECT_EQ(ret(SYS_chdir, kBuf), -ENOENT);
    EXPECT_EQ(ret(SYS_chdir, kGuard), -EFAULT);
    EXPECT_EQ(cwd(), "/");
    // fchdir: a directory descriptor of a mount; not a file, not a made-up directory.
    put(kBuf, "/sub/made");
    const int64_t d = ret(SYS_open, kBuf, O_RDONLY | O_DIRECTORY);
    ASSERT_GE(d, 3);
    EXPECT_EQ(ret(SYS_fchdir, d), 0);
    EXPECT_EQ(cwd(), "/sub/made");
    EXPECT_EQ(ret(SYS_fchdir, fd), -ENOTDIR);
    EXPECT_EQ(ret(SYS_fchdir, 999), -EBADF);
    put(kBuf, "/proc/self/fd");
    const int64_t proc = ret(SYS_open, kBuf, O_RDONLY | O_DIRECTORY);
    if (proc >= 0) {
        EXPECT_EQ(ret(SYS_fchdir, proc), -EACCES) << "the VMM's own directory";
    }
    EXPECT_EQ(cwd(), "/sub/made");
}

} // namespace
} // namespace kvmgpu::linux_abi
