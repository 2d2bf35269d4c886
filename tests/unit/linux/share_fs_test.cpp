// The share's path layer: every way out of the directory (.., absolute
// paths, symlinks absolute and relative, /proc magic links) stays inside;
// read-only shares refuse writes; FIFOs and bad flags are refused.
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/unit/linux/server_fixture.h"
#include "kvmtool-gpu/vmm/linux/share_fs.h"

namespace kvmgpu::linux_abi {
namespace {

using server_fixture::read_via;

namespace fs = std::filesystem;

struct Share : ::testing::Test {
    fs::path top, dir;
    void SetUp() override {
        char tmpl[] = "/tmp/kvmgpu-share-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        top = tmpl;
        dir = top / "share";
        fs::create_directories(dir / "sub");
        std::ofstream(top / "secret.txt") << "secret";
        std::ofstream(dir / "file.txt") << "inside";
        std::ofstream(dir / "sub" / "deep.txt") << "deep";
        fs::create_symlink("../secret.txt", dir / "rel_out");
        fs::create_symlink(top / "secret.txt", dir / "abs_out");
        fs::create_symlink("/file.txt", dir / "abs_in"); // absolute, but inside: the share's /file.txt
        fs::create_symlink("/proc/self/root/etc/passwd", dir / "magic");
        ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
    }
    void TearDown() override { fs::remove_all(top); }
};

const std::string kNoEnt = "errno " + std::to_string(ENOENT);

TEST_F(Share, PathsResolveInsideTheShare) {
    const ShareRoot s(dir, false);
    EXPECT_EQ(read_via(s, "file.txt"), "inside");
    EXPECT_EQ(read_via(s, "/file.txt"), "inside"); // absolute: from the share's root
    EXPECT_EQ(read_via(s, "sub/deep.txt"), "deep");
    EXPECT_EQ(read_via(s, "sub/../file.txt"), "inside");
    EXPECT_EQ(read_via(s, "abs_in"), "inside");
}

TEST_F(Share, NoWayOut) {
    const ShareRoot s(dir, false);
    for (const char* p : {"../secret.txt", "/../secret.txt", "sub/../../secret.txt", "../../../../../../etc/passwd",
                          "rel_out", "abs_out", "magic", "/proc/self/root/etc/passwd"})
        EXPECT_EQ(read_via(s, p), kNoEnt) << p;
    // With .. clamped at the root, "../file.txt" is the share's own file.
    EXPECT_EQ(read_via(s, "../file.txt"), "inside");
    struct stat st {};
    EXPECT_EQ(s.stat(-1, "abs_out", true, &st), -ENOENT);
    EXPECT_EQ(s.stat(-1, "abs_out", false, &st), 0); // the link itself is inside
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    char target[64] = {};
    EXPECT_EQ(s.readlink(-1, "rel_out", target, sizeof target), 13);
    EXPECT_EQ(s.readlink(-1, "../rel_out", target, sizeof target), 13);
}

TEST_F(Share, DirectoryDescriptorsAreRootsOfTheirOwn) {
    const ShareRoot s(dir, false);
    const int sub = s.open(-1, "sub", O_RDONLY | O_DIRECTORY, 0);
    ASSERT_GE(sub, 0);
    EXPECT_EQ(read_via(s, "deep.txt", sub), "deep");
    EXPECT_EQ(read_via(s, "../file.txt", sub), kNoEnt); // clamped at sub, never above the share
    ::close(sub);
}

TEST_F(Share, ReadOnlyShareRefusesWrites) {
    const ShareRoot s(dir, true);
    EXPECT_EQ(s.open(-1, "file.txt", O_WRONLY, 0), -EROFS);
    EXPECT_EQ(s.open(-1, "file.txt", O_RDWR, 0), -EROFS);
    EXPECT_EQ(s.open(-1, "new.txt", O_RDONLY | O_CREAT, 0644), -EROFS);
    EXPECT_EQ(s.open(-1, "file.txt", O_RDONLY | O_TRUNC, 0), -EROFS);
    EXPECT_EQ(read_via(s, "file.txt"), "inside");
    EXPECT_FALSE(fs::exists(dir / "new.txt"));
}

TEST_F(Share, WritableShareCreatesWithTheModeMasked) {
    const ShareRoot s(dir, false);
    const int fd = s.open(-1, "/new.txt", O_WRONLY | O_CREAT | O_EXCL, 04777);
    ASSERT_GE(fd, 0);
    ::close(fd);
    struct stat st {};
    ASSERT_EQ(::stat((dir / "new.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07000, 0u); // no set-id bits from a guest
    EXPECT_EQ(s.open(-1, "new.txt", O_WRONLY | O_CREAT | O_EXCL, 0644), -EEXIST);
    EXPECT_EQ(s.open(-1, "../escape.txt", O_WRONLY | O_CREAT, 0644) >= 0, true); // created inside: ".." clamps
    EXPECT_TRUE(fs::exists(dir / "escape.txt"));
    EXPECT_FALSE(fs::exists(top / "escape.txt"));
}

TEST_F(Share, BadFlagsPathsAndSpecialFilesGetLinuxErrnos) {
    const ShareRoot s(dir, false);
    EXPECT_EQ(s.open(-1, "file.txt", O_RDONLY | O_PATH, 0), -EINVAL);
    EXPECT_EQ(s.open(-1, "file.txt", O_RDONLY | 020000000 /* __O_TMPFILE */, 0), -EINVAL);
    EXPECT_EQ(s.open(-1, "file.txt", O_ACCMODE, 0), -EINVAL);
    EXPECT_EQ(s.open(-1, "", O_RDONLY, 0), -ENOENT);
    EXPECT_EQ(s.open(-1, std::string(5000, 'a'), O_RDONLY, 0), -ENAMETOOLONG);
    EXPECT_EQ(s.open(-1, "file.txt/x", O_RDONLY, 0), -ENOTDIR);
    EXPECT_EQ(s.open(-1, "file.txt", O_RDONLY | O_DIRECTORY, 0), -ENOTDIR);
    EXPECT_EQ(s.open(-1, "fifo", O_RDONLY, 0), -EACCES); // and it did not block
    EXPECT_EQ(s.open(-1, "abs_in", O_RDONLY | O_NOFOLLOW, 0), -ELOOP);
}

// Opening a FIFO or device has effects of its own (a FIFO's other end
// wakes, a driver acts): a special file in the share must be refused
// without being opened at all. inotify reports every real open.
TEST_F(Share, SpecialFilesAreRefusedWithoutBeingOpened) {
    const ShareRoot s(dir, false);
    const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    ASSERT_GE(watch, 0);
    ASSERT_GE(::inotify_add_watch(watch, (dir / "fifo").c_str(), IN_OPEN), 0);
    const auto opens_seen = [&] {
        char events[4096];
        return ::read(watch, events, sizeof events) > 0;
    };
    const int probe = ::open((dir / "fifo").c_str(), O_PATH | O_CLOEXEC);
    ::close(probe);
    if (opens_seen()) {
        ::close(watch);
        GTEST_SKIP() << "this kernel reports O_PATH lookups to inotify as opens: they cannot be told apart here";
    }
    for (uint64_t flags : {O_RDONLY, O_WRONLY, O_RDWR, O_WRONLY | O_CREAT | O_TRUNC, O_RDONLY | O_NOFOLLOW})
        EXPECT_EQ(s.open(-1, "fifo", flags, 0644), -EACCES) << flags;
    EXPECT_FALSE(opens_seen());
    EXPECT_EQ(s.open(-1, "fifo", O_WRONLY | O_CREAT | O_EXCL, 0644), -EEXIST);
    ::close(watch);
    // A socket is refused the same way (open() of one would be ENXIO).
    const int sock = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string where = (dir / "sock").string();
    ASSERT_LT(where.size(), sizeof addr.sun_path);
    std::memcpy(addr.sun_path, where.c_str(), where.size() + 1);
    ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(s.open(-1, "sock", O_RDWR, 0), -EACCES);
    ::close(sock);
}

TEST_F(Share, OpenFlagsStillMeanWhatTheySay) {
    const ShareRoot s(dir, false);
    const int trunc = s.open(-1, "file.txt", O_WRONLY | O_TRUNC, 0);
    ASSERT_GE(trunc, 0);
    EXPECT_EQ(::write(trunc, "ab", 2), 2);
    EXPECT_EQ(::fcntl(trunc, F_GETFL) & O_ACCMODE, O_WRONLY);
    ::close(trunc);
    EXPECT_EQ(fs::file_size(dir / "file.txt"), 2u);
    const int created = s.open(-1, "sub/made.txt", O_RDWR | O_CREAT, 0600);
    ASSERT_GE(created, 0);
    ::close(created);
    EXPECT_TRUE(fs::is_regular_file(dir / "sub" / "made.txt"));
    const int again = s.open(-1, "sub/made.txt", O_RDWR | O_CREAT, 0600); // exists: opened, not re-created
    EXPECT_GE(again, 0);
    ::close(again);
    EXPECT_EQ(s.open(-1, "sub", O_WRONLY, 0), -EISDIR);
    const int d = s.open(-1, "sub", O_RDONLY | O_DIRECTORY, 0);
    EXPECT_GE(d, 0);
    ::close(d);
}

TEST_F(Share, MissingShareIsAOneLineError) {
    try {
        ShareRoot s(top / "absent", false);
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("--share"), std::string::npos);
    }
    EXPECT_THROW(ShareRoot((dir / "file.txt").string(), false), std::runtime_error);
}

} // namespace
} // namespace kvmgpu::linux_abi
