// The guest's file system of mounts (root_fs.h): a read-only root with a
// writable share inside it. Every way out (.., absolute symlinks, /proc
// magic links, the host's /proc and /sys through --root /), every write to
// the root (directly, through a directory descriptor, by access(W_OK)).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/unit/linux/server_fixture.h"
#include "kvmtool-gpu/vmm/linux/pseudo_fs.h"
#include "kvmtool-gpu/vmm/linux/root_fs.h"

namespace kvmgpu::linux_abi {
namespace {

using server_fixture::read_via;

namespace fs = std::filesystem;

struct Root : ::testing::Test {
    fs::path top, root, share;
    void SetUp() override {
        char tmpl[] = "/tmp/kvmgpu-root-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        top = tmpl;
        root = top / "root";
        share = top / "work";
        fs::create_directories(root / "etc");
        fs::create_directories(root / "lib");
        fs::create_directories(root / "mnt" / "work"); // the share's mount point in the root
        fs::create_directories(share / "sub");
        std::ofstream(top / "secret.txt") << "secret";
        std::ofstream(root / "etc" / "hostname") << "rootfile";
        std::ofstream(root / "mnt" / "work" / "hidden.txt") << "under the mount";
        std::ofstream(share / "data.txt") << "sharefile";
        fs::create_symlink("/etc/hostname", root / "lib" / "abs_in"); // absolute: the root's own file
        fs::create_symlink(top / "secret.txt", root / "abs_out");
        fs::create_symlink("../../secret.txt", share / "rel_out");
        fs::create_symlink("/etc/hostname", share / "abs_link"); // the share's own /etc: none
        fs::create_symlink("/proc/self/root" + (top / "secret.txt").string(), root / "magic");
    }
    void TearDown() override { fs::remove_all(top); }
    GuestFs mounts() const { return GuestFs({{"/", root, true, "--root"}, {"/mnt/work", share, false}}); }
};

const std::string kNoEnt = "errno " + std::to_string(ENOENT);

TEST(GuestFsPaths, NormalizeTakesDotsLexically) {
    EXPECT_EQ(GuestFs::normalize("/"), "/");
    EXPECT_EQ(GuestFs::normalize("//a///b/"), "/a/b");
    EXPECT_EQ(GuestFs::normalize("/a/./b/../c"), "/a/c");
    EXPECT_EQ(GuestFs::normalize("/../../.."), "/");
    EXPECT_EQ(GuestFs::normalize("/a/../../b"), "/b");
}

TEST_F(Root, PathsPickTheLongestMount) {
    const GuestFs g = mounts();
    EXPECT_EQ(read_via(g, "/etc/hostname"), "rootfile");
    EXPECT_EQ(read_via(g, "etc/hostname"), "rootfile"); // cwd "/"
    EXPECT_EQ(read_via(g, "/mnt/work/data.txt"), "sharefile");
    EXPECT_EQ(read_via(g, "/mnt/./work//sub/../data.txt"), "sharefile");
    EXPECT_EQ(read_via(g, "/mnt/work/hidden.txt"), kNoEnt); // the root's file under the mount point is covered
    EXPECT_EQ(read_via(g, "/lib/abs_in"), "rootfile");
    EXPECT_EQ(read_via(g, "/mnt/work/../../etc/hostname"), "rootfile");
    const GuestFs::Located l = g.locate("/mnt/work/sub/x");
    ASSERT_NE(l.mount, nullptr);
    EXPECT_EQ(l.rest, "sub/x");
    EXPECT_EQ(g.locate("/mnt/work").rest, ".");
    EXPECT_EQ(g.locate("/mnt/workshop").rest, "mnt/workshop"); // a prefix of a name is not the mount
    struct stat st {};
    EXPECT_EQ(g.stat(-1, "/mnt/work", true, &st), 0);
    struct stat share_st {};
    ASSERT_EQ(::stat(share.c_str(), &share_st), 0);
    EXPECT_EQ(st.st_ino, share_st.st_ino); // the mount point is the share's directory
}

TEST_F(Root, NoWayOut) {
    const GuestFs g = mounts();
    for (const char* p : {"/../secret.txt", "/abs_out", "/magic", "/mnt/work/rel_out", "/mnt/work/abs_link",
                          "/proc/self/root/etc/passwd", "../../../../../secret.txt"})
        EXPECT_EQ(read_via(g, p), kNoEnt) << p;
    char target[128] = {};
    EXPECT_GT(g.readlink(-1, "/abs_out", target, sizeof target), 0); // the link itself is readable, not followed
}

TEST_F(Root, NothingIsWrittenToTheRoot) {
    const GuestFs g = mounts();
    EXPECT_EQ(g.open(-1, "/etc/hostname", O_WRONLY, 0), -EROFS);
    EXPECT_EQ(g.open(-1, "/etc/new", O_WRONLY | O_CREAT, 0644), -EROFS);
    EXPECT_EQ(g.open(-1, "/etc/hostname", O_RDONLY | O_TRUNC, 0), -EROFS);
    EXPECT_EQ(g.open(-1, "/mnt/work/../../etc/x", O_RDWR | O_CREAT, 0644), -EROFS);
    EXPECT_TRUE(g.read_only_at(-1, "/etc/hostname"));
    EXPECT_FALSE(g.read_only_at(-1, "/mnt/work/data.txt"));
    // Through a directory descriptor of the root: still the root's rules.
    const int etc = g.open(-1, "/etc", O_RDONLY | O_DIRECTORY, 0);
    ASSERT_GE(etc, 0);
    EXPECT_EQ(g.open(etc, "made.txt", O_WRONLY | O_CREAT, 0644), -EROFS);
    EXPECT_EQ(read_via(g, "hostname", etc), "rootfile");
    EXPECT_EQ(read_via(g, "../../secret.txt", etc), kNoEnt);
    EXPECT_TRUE(g.read_only_at(etc, "x"));
    ::close(etc);
    EXPECT_FALSE(fs::exists(root / "etc" / "new"));
    EXPECT_FALSE(fs::exists(root / "etc" / "made.txt"));
    EXPECT_EQ(read_via(g, "/etc/hostname"), "rootfile"); // unchanged
    // The share takes writes, through its directory descriptor too.
    const int w = g.open(-1, "/mnt/work/out.txt", O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(w, 0);
    ::close(w);
    EXPECT_TRUE(fs::exists(share / "out.txt"));
    const int sub = g.open(-1, "/mnt/work/sub", O_RDONLY | O_DIRECTORY, 0);
    ASSERT_GE(sub, 0);
    const int w2 = g.open(sub, "inner.txt", O_WRONLY | O_CREAT, 0644);
    EXPECT_GE(w2, 0);
    if (w2 >= 0) ::close(w2);
    ::close(sub);
    EXPECT_TRUE(fs::exists(share / "sub" / "inner.txt"));
    // A descriptor this GuestFs did not hand out is no directory of it.
    const int other = ::open(top.c_str(), O_RDONLY | O_DIRECTORY);
    EXPECT_EQ(g.open(other, "secret.txt", O_RDONLY, 0), -EBADF);
    ::close(other);
}

TEST_F(Root, HostPseudoFileSystemsAreNotTheGuests) {
    // --root /: the host's /proc and /sys are refused, its ordinary files are not.
    const GuestFs host({{"/", "/", true, "--root"}});
    EXPECT_EQ(read_via(host, "/proc/self/status"), kNoEnt);
    EXPECT_EQ(read_via(host, "/proc/self/environ"), kNoEnt);
    EXPECT_EQ(host.open(-1, "/proc/self/mem", O_RDONLY, 0), -ENOENT);
    EXPECT_EQ(host.open(-1, "/proc", O_RDONLY | O_DIRECTORY, 0), -ENOENT);
    EXPECT_EQ(host.open(-1, "/sys/kernel", O_RDONLY | O_DIRECTORY, 0), -ENOENT);
    struct stat st {};
    EXPECT_EQ(host.stat(-1, "/proc/self", false, &st), -ENOENT);
    char buf[64];
    EXPECT_EQ(host.readlink(-1, "/proc/self", buf, sizeof buf), -ENOENT);
    EXPECT_EQ(host.open(-1, (root / "etc" / "hostname").string(), O_RDONLY, 0) >= 0, true);
    const int proc = ::open("/proc/self/status", O_RDONLY);
    ASSERT_GE(proc, 0);
    EXPECT_TRUE(on_pseudo_fs(proc));
    ::close(proc);
    const int tmp = ::open(top.c_str(), O_RDONLY | O_DIRECTORY);
    EXPECT_FALSE(on_pseudo_fs(tmp));
    ::close(tmp);
    EXPECT_TRUE(on_pseudo_fs(-1));
}

TEST_F(Root, MountErrorsNameTheFlag) {
    try {
        GuestFs({{"/", (top / "none").string(), true, "--root"}});
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("--root " + (top / "none").string() + ": ", 0), 0u) << e.what();
    }
    EXPECT_THROW(GuestFs({{"work", share, false}}), std::runtime_error);                        // not absolute
    EXPECT_THROW(GuestFs({{"/w", share, false}, {"/w/", share, true}}), std::runtime_error);    // twice
    const GuestFs only_share({{"/mnt/work", share, false}});
    EXPECT_EQ(read_via(only_share, "/etc/hostname"), kNoEnt); // nothing at "/"
    EXPECT_EQ(only_share.fd(), -1);
}

} // namespace
} // namespace kvmgpu::linux_abi
