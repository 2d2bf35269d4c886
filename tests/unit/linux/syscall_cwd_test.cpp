// The guest's working directory through the system calls (syscalls_cwd.cpp,
// guest_cwd.h): chdir, fchdir and getcwd, every *at call's AT_FDCWD
// resolving from the cwd, /proc/self/cwd, one cwd for all threads, a cwd
// whose directory is renamed or removed, and nothing out of the mounts.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;
namespace fs = std::filesystem;
constexpr uint64_t kAtFdcwd = static_cast<uint64_t>(-100);
constexpr uint64_t kPath = kBuf, kPath2 = kBuf + 8192, kOut = kBuf + 16384;

struct Cwd : Server {
    int64_t with_path(uint64_t nr, const std::string& p, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0) {
        put(kPath, p);
        return ret(nr, kPath, a1, a2, a3);
    }
    int64_t chdir(const std::string& p) { return with_path(SYS_chdir, p); }
    // getcwd's answer, or "errno N".
    std::string getcwd(uint64_t len = 4096) {
        const int64_t n = ret(SYS_getcwd, kOut, len);
        if (n < 0) return "errno " + std::to_string(-n);
        const std::string s(reinterpret_cast<char*>(at(kOut)));
        EXPECT_EQ(static_cast<uint64_t>(n), s.size() + 1) << "the length counts the NUL";
        return s;
    }
    int64_t open_at(int64_t dirfd, const std::string& p, uint64_t flags = O_RDONLY, uint64_t mode = 0) {
        put(kPath, p);
        return ret(SYS_openat, static_cast<uint64_t>(dirfd), kPath, flags, mode);
    }
    // The first bytes of a file the guest opens relative to its cwd, or "errno N".
    std::string read_rel(const std::string& p) {
        const int64_t fd = open_at(-100, p);
        if (fd < 0) return "errno " + std::to_string(-fd);
        const int64_t n = ret(SYS_read, fd, kOut, 64);
        ret(SYS_close, fd);
        return n < 0 ? "read errno" : std::string(reinterpret_cast<char*>(at(kOut)), n);
    }
};

TEST_F(Cwd, ItStartsAtTheRootAndChdirMovesIt) {
    make(true);
    EXPECT_EQ(getcwd(), "/");
    EXPECT_EQ(read_rel("in.txt"), "0123456789");
    EXPECT_EQ(chdir("sub"), 0);
    EXPECT_EQ(getcwd(), "/sub");
    EXPECT_EQ(read_rel("a"), "a");
    EXPECT_EQ(read_rel("./a"), "a");
    EXPECT_EQ(read_rel("../in.txt"), "0123456789");
    EXPECT_EQ(read_rel("in.txt"), "errno 2") << "relative paths start at the cwd, not at /";
    EXPECT_EQ(read_rel("/in.txt"), "0123456789") << "absolute ones at the root";
    EXPECT_EQ(chdir(".."), 0);
    EXPECT_EQ(getcwd(), "/");
    EXPECT_EQ(chdir("/sub/"), 0);
    EXPECT_EQ(getcwd(), "/sub");
}

TEST_F(Cwd, EveryAtFdcwdCallResolvesFromIt) {
    make(true);
    ASSERT_EQ(chdir("sub"), 0);
    struct stat st {};
    EXPECT_EQ(with_path(SYS_stat, "a", kOut), 0);
    std::memcpy(&st, at(kOut), sizeof st);
    EXPECT_EQ(st.st_size, 1);
    put(kPath, "a");
    EXPECT_EQ(ret(SYS_newfstatat, kAtFdcwd, kPath, kOut, 0), 0);
    EXPECT_EQ(ret(SYS_statx, kAtFdcwd, kPath, 0, 0x7ff, kOut), 0);
    EXPECT_EQ(ret(SYS_faccessat, kAtFdcwd, kPath, R_OK), 0);
    EXPECT_EQ(with_path(SYS_access, "a", R_OK), 0);
    EXPECT_EQ(with_path(SYS_access, "in.txt", R_OK), -ENOENT);
    // AT_EMPTY_PATH with AT_FDCWD: the cwd itself.
    put(kPath, "");
    EXPECT_EQ(ret(SYS_newfstatat, kAtFdcwd, kPath, kOut, 0x1000), 0);
    std::memcpy(&st, at(kOut), sizeof st);
    struct stat host {};
    ASSERT_EQ(::stat((dir / "sub").c_str(), &host), 0);
    EXPECT_EQ(st.st_ino, host.st_ino);
    // The tree calls.
    EXPECT_EQ(with_path(SYS_mkdir, "made", 0755), 0);
    EXPECT_TRUE(fs::is_directory(dir / "sub" / "made"));
    EXPECT_GE(open_at(-100, "made/f", O_WRONLY | O_CREAT, 0644), 3);
    EXPECT_TRUE(fs::exists(dir / "sub" / "made" / "f"));
    put(kPath, "made/f");
    put(kPath2, "../g");
    EXPECT_EQ(ret(SYS_rename, kPath, kPath2), 0);
    EXPECT_TRUE(fs::exists(dir / "g")) << "../g from /sub is /g";
    put(kPath, "../g");
    put(kPath2, "h");
    EXPECT_EQ(ret(SYS_renameat2, kAtFdcwd, kPath, kAtFdcwd, kPath2, 0), 0);
    EXPECT_TRUE(fs::exists(dir / "sub" / "h"));
    EXPECT_EQ(with_path(SYS_unlink, "h"), 0);
    EXPECT_EQ(with_path(SYS_rmdir, "made"), 0);
    EXPECT_FALSE(fs::exists(dir / "sub" / "made"));
    fs::create_symlink("a", dir / "sub" / "lnk");
    EXPECT_EQ(with_path(SYS_readlink, "lnk", kOut, 64), 1);
    put(kPath, "lnk");
    EXPECT_EQ(ret(SYS_readlinkat, kAtFdcwd, kPath, kOut, 64), 1);
    // The opened file's /proc/self/fd link is the absolute path.
    const int64_t fd = open_at(-100, "a");
    ASSERT_GE(fd, 3);
    put(kPath, "/proc/self/fd/" + std::to_string(fd));
    EXPECT_EQ(ret(SYS_readlink, kPath, kOut, 64), 6);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(at(kOut)), 6), "/sub/a");
}

TEST_F(Cwd, MadeUpFilesByARelativePath) {
    make(false);
    // Without files "/" is the only directory.
    EXPECT_EQ(chdir("/"), 0);
    EXPECT_EQ(chdir("sub"), -ENOENT);
    EXPECT_EQ(getcwd(), "/");
    EXPECT_GE(open_at(-100, "dev/null"), 3);
    EXPECT_GE(open_at(-100, "../../dev/null"), 3) << "\"..\" at / stays at /";
}

TEST_F(Cwd, DotDotAndSymbolicLinksStayInside) {
    make(true);
    fs::create_symlink("/", dir / "sub" / "abs_root");  // the share's root, not the host's
    fs::create_symlink("../../../..", dir / "sub" / "up");
    fs::create_symlink("sub", dir / "to_sub");
    EXPECT_EQ(chdir("../../.."), 0);
    EXPECT_EQ(getcwd(), "/");
    EXPECT_EQ(read_rel("../../../in.txt"), "0123456789");
    EXPECT_EQ(chdir("/sub/up"), 0);
    EXPECT_EQ(getcwd(), "/") << "a link up and out ends at the share's root";
    EXPECT_EQ(read_rel("in.txt"), "0123456789");
    EXPECT_EQ(chdir("/sub/abs_root/sub"), 0);
    EXPECT_EQ(getcwd(), "/sub");
    // Through a link: getcwd gives the directory's own path, as Linux's does.
    EXPECT_EQ(chdir("/to_sub"), 0);
    EXPECT_EQ(getcwd(), "/sub");
    EXPECT_EQ(read_rel("../in.txt"), "0123456789");
    // A link to a host directory outside the share names nothing in it.
    fs::create_symlink(dir.parent_path(), dir / "host_tmp");
    EXPECT_EQ(chdir("/host_tmp"), -ENOENT);
    EXPECT_EQ(getcwd(), "/sub") << "a failed chdir leaves the cwd";
}

TEST_F(Cwd, ChdirRefusesWhatIsNotADirectory) {
    make(true);
    EXPECT_EQ(chdir("in.txt"), -ENOTDIR);
    EXPECT_EQ(chdir("nothing"), -ENOENT);
    EXPECT_EQ(chdir(""), -ENOENT);
    EXPECT_EQ(chdir("/dev/null"), -ENOENT) << "the VMM's made-up files are no place to be";
    EXPECT_EQ(chdir("/proc/self/fd"), -ENOENT);
    EXPECT_EQ(ret(SYS_chdir, 0), -EFAULT);
    EXPECT_EQ(ret(SYS_chdir, kGuard), -EFAULT);
    std::memset(at(kPath), 'a', 8192);
    EXPECT_EQ(ret(SYS_chdir, kPath), -ENAMETOOLONG);
    EXPECT_EQ(getcwd(), "/");
}

TEST_F(Cwd, GetcwdChecksItsBuffer) {
    make(true);
    ASSERT_EQ(chdir("sub"), 0);
    EXPECT_EQ(getcwd(4), "errno " + std::to_string(ERANGE)) << "\"/sub\" and its NUL need 5";
    EXPECT_EQ(getcwd(5), "/sub");
    EXPECT_EQ(ret(SYS_getcwd, kOut, 0), -ERANGE);
    EXPECT_EQ(ret(SYS_getcwd, 0, 4096), -EFAULT);
    EXPECT_EQ(ret(SYS_getcwd, kGuard - 3, 64), -EFAULT) << "a buffer running into the guard";
    EXPECT_EQ(ret(SYS_getcwd, kOut, ~uint64_t{0}), -EFAULT);
    EXPECT_EQ(ret(SYS_getcwd, kRam - 2, 5), -EFAULT) << "a buffer running off RAM";
}

TEST_F(Cwd, FchdirTakesADirectoryTheGuestOpened) {
    make(true);
    const int64_t sub = open_at(-100, "sub", O_RDONLY | O_DIRECTORY);
    ASSERT_GE(sub, 3);
    EXPECT_EQ(ret(SYS_fchdir, sub), 0);
    EXPECT_EQ(ret(SYS_close, sub), 0);
    EXPECT_EQ(getcwd(), "/sub") << "the cwd outlives the descriptor";
    EXPECT_EQ(read_rel("a"), "a");
    const int64_t file = open_at(-100, "a");
    EXPECT_EQ(ret(SYS_fchdir, file), -ENOTDIR);
    EXPECT_EQ(ret(SYS_fchdir, 1), -ENOTDIR);
    EXPECT_EQ(ret(SYS_fchdir, 200), -EBADF);
    EXPECT_EQ(ret(SYS_fchdir, static_cast<uint64_t>(-1)), -EBADF);
    EXPECT_EQ(ret(SYS_fchdir, 1ull << 40), -EBADF);
    const int64_t proc_fd = open_at(-100, "/proc/self/fd", O_RDONLY | O_DIRECTORY);
    ASSERT_GE(proc_fd, 3);
    EXPECT_EQ(ret(SYS_fchdir, proc_fd), -EACCES);
    EXPECT_EQ(getcwd(), "/sub");
    // A directory opened under a directory descriptor.
    const int64_t root = open_at(-100, "/", O_RDONLY | O_DIRECTORY);
    ASSERT_GE(root, 3);
    EXPECT_EQ(ret(SYS_fchdir, root), 0);
    EXPECT_EQ(getcwd(), "/");
}

TEST_F(Cwd, ProcSelfCwdIsALinkToIt) {
    make(true);
    ASSERT_EQ(chdir("sub"), 0);
    EXPECT_EQ(with_path(SYS_readlink, "/proc/self/cwd", kOut, 64), 4);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(at(kOut)), 4), "/sub");
    EXPECT_EQ(with_path(SYS_readlink, "/proc/thread-self/cwd", kOut, 2), 2) << "cut at the buffer, as readlink does";
    struct stat st {}, host {};
    ASSERT_EQ(::stat((dir / "sub").c_str(), &host), 0);
    EXPECT_EQ(with_path(SYS_stat, "/proc/self/cwd", kOut), 0);
    std::memcpy(&st, at(kOut), sizeof st);
    EXPECT_EQ(st.st_ino, host.st_ino);
    EXPECT_EQ(with_path(SYS_lstat, "/proc/self/cwd", kOut), 0);
    std::memcpy(&st, at(kOut), sizeof st);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    const int64_t fd = open_at(-100, "/proc/self/cwd", O_RDONLY | O_DIRECTORY);
    EXPECT_GE(fd, 3);
    EXPECT_EQ(open_at(-100, "/proc/self/cwd", O_RDONLY | O_NOFOLLOW), -ELOOP);
}

TEST_F(Cwd, ThreadsShareOneCwd) {
    make(true);
    SyscallCall c;
    c.nr = SYS_chdir;
    c.tid = 2;
    put(kPath, "sub");
    c.arg[0] = kPath;
    EXPECT_EQ(server->serve(c, cpu).ret, 0);
    EXPECT_EQ(getcwd(), "/sub") << "thread 1 sees thread 2's chdir";
}

TEST_F(Cwd, ARenamedCwdIsFollowedARemovedOneIsGone) {
    make(true);
    ASSERT_EQ(chdir("sub"), 0);
    fs::rename(dir / "sub", dir / "moved");
    EXPECT_EQ(getcwd(), "/moved");
    EXPECT_EQ(read_rel("a"), "a");
    // Something new at the old path is not the cwd.
    fs::create_directory(dir / "sub");
    EXPECT_EQ(getcwd(), "/moved");
    fs::create_directory(dir / "gone");
    ASSERT_EQ(chdir("/gone"), 0);
    fs::remove(dir / "gone");
    EXPECT_EQ(getcwd(), "errno " + std::to_string(ENOENT));
    EXPECT_EQ(read_rel("x"), "errno " + std::to_string(ENOENT));
    EXPECT_EQ(with_path(SYS_mkdir, "x", 0755), -ENOENT);
    EXPECT_EQ(chdir(".."), -ENOENT) << "no way up from a removed directory";
    // Re-made at the same path: a new directory, still not the cwd.
    fs::create_directory(dir / "gone");
    EXPECT_EQ(getcwd(), "errno " + std::to_string(ENOENT));
    EXPECT_EQ(read_rel("/in.txt"), "0123456789") << "absolute paths still work";
    EXPECT_EQ(chdir("/sub"), 0);
    EXPECT_EQ(getcwd(), "/sub");
}

TEST_F(Cwd, MountsAreCrossedByDotDot) {
    char tmpl[] = "/tmp/kvmgpu-cwdroot-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const fs::path root = tmpl;
    fs::create_directories(root / "etc");
    fs::create_directories(root / "work");
    std::ofstream(root / "etc" / "hostname") << "rootfile";
    make(true); // the fixture's share, mounted below at /work instead of /
    options.share = std::make_shared<GuestFs>(
        std::vector<MountSpec>{{"/", root, true, "--root"}, {"/work", dir, false}});
    options.cwd = "/work/sub";
    make(false);
    EXPECT_EQ(getcwd(), "/work/sub");
    EXPECT_EQ(read_rel("a"), "a");
    EXPECT_EQ(read_rel("../../etc/hostname"), "rootfile");
    EXPECT_EQ(read_rel("../../../../etc/hostname"), "rootfile");
    EXPECT_GE(open_at(-100, "new.txt", O_WRONLY | O_CREAT, 0644), 3);
    EXPECT_TRUE(fs::exists(dir / "sub" / "new.txt"));
    EXPECT_EQ(chdir("../.."), 0);
    EXPECT_EQ(getcwd(), "/");
    EXPECT_EQ(open_at(-100, "etc/new", O_WRONLY | O_CREAT, 0644), -EROFS);
    EXPECT_EQ(chdir("work"), 0);
    EXPECT_EQ(getcwd(), "/work");
    EXPECT_EQ(read_rel("in.txt"), "0123456789");
    fs::remove_all(root);
}

TEST_F(Cwd, TheStartingCwdMustBeADirectoryInTheMounts) {
    options.cwd = "/sub";
    make(true);
    EXPECT_EQ(getcwd(), "/sub");
    EXPECT_EQ(read_rel("a"), "a");
    ServerOptions o = options;
    for (const char* bad : {"/nothing", "/in.txt", "sub", "/dev/null"}) {
        o.cwd = bad;
        EXPECT_THROW(SyscallServer(mem, layout(), o), std::invalid_argument) << bad;
    }
    o.share = nullptr;
    o.cwd = "/sub";
    EXPECT_THROW(SyscallServer(mem, layout(), o), std::invalid_argument) << "no files: only /";
    o.cwd = "/";
    EXPECT_NO_THROW(SyscallServer(mem, layout(), o));
}

} // namespace
} // namespace kvmgpu::linux_abi
