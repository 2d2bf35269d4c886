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

// Several shares at once: two writable ones (one nested in the other's
// guest path) and a read-only one, over the read-only root.
struct Shares : Root {
    fs::path a, b, ro;
    void SetUp() override {
        Root::SetUp();
        a = top / "a";
        b = top / "b";
        ro = top / "ro";
        fs::create_directories(a / "inner"); // covered by the nested mount b
        fs::create_directories(b);
        fs::create_directories(ro);
        std::ofstream(a / "a.txt") << "in a";
        std::ofstream(a / "inner" / "covered.txt") << "a's own inner";
        std::ofstream(b / "b.txt") << "in b";
        std::ofstream(ro / "ro.txt") << "in ro";
        fs::create_symlink("/data/inner/b.txt", a / "abs_to_b");  // the guest's path of b's file
        fs::create_symlink("inner/b.txt", a / "rel_to_b");        // through a's covered directory
        fs::create_symlink("../b/b.txt", a / "host_rel_to_b");   // b's host path, relative
        fs::create_symlink("/etc/hostname", a / "abs_to_root");  // the root's file
        fs::create_symlink("../../../etc/hostname", a / "up_to_root");
        fs::create_symlink("/ro/ro.txt", b / "abs_to_ro");
    }
    GuestFs mounts() const {
        return GuestFs({{"/", root, true, "--root"}, {"/data", a, false}, {"/data/inner", b, false}, {"/ro", ro, true}});
    }
};

TEST_F(Shares, EachAtItsOwnPathTheLongestPrefixFirst) {
    const GuestFs g = mounts();
    EXPECT_EQ(read_via(g, "/data/a.txt"), "in a");
    EXPECT_EQ(read_via(g, "/data/inner/b.txt"), "in b");
    EXPECT_EQ(read_via(g, "/data/inner/covered.txt"), kNoEnt); // a's directory under b's mount point
    EXPECT_EQ(read_via(g, "/ro/ro.txt"), "in ro");
    EXPECT_EQ(read_via(g, "/data/inner/../a.txt"), "in a");
    EXPECT_EQ(read_via(g, "/data/inner/../../etc/hostname"), "rootfile");
    EXPECT_EQ(read_via(g, "/ro/../data/inner/b.txt"), "in b");
}

TEST_F(Shares, SymlinksNeverLeaveTheMountTheyStartIn) {
    const GuestFs g = mounts();
    for (const char* p : {"/data/abs_to_b", "/data/host_rel_to_b", "/data/abs_to_root", "/data/up_to_root",
                          "/data/inner/abs_to_ro"})
        EXPECT_EQ(read_via(g, p), kNoEnt) << p;
    EXPECT_EQ(read_via(g, "/data/rel_to_b"), kNoEnt) << "a's own inner/, which holds no b.txt";
    // A directory descriptor of one share: ".." stops at it.
    const int inner = g.open(-1, "/data/inner", O_RDONLY | O_DIRECTORY, 0);
    ASSERT_GE(inner, 0);
    EXPECT_EQ(read_via(g, "b.txt", inner), "in b");
    EXPECT_EQ(read_via(g, "../a.txt", inner), kNoEnt);
    EXPECT_EQ(read_via(g, "../../ro/ro.txt", inner), kNoEnt);
    ::close(inner);
}

TEST_F(Shares, RenameAndLinkAcrossMountsAreExdev) {
    const GuestFs g = mounts();
    EXPECT_EQ(g.rename(-1, "/data/a.txt", -1, "/data/inner/moved.txt", 0), -EXDEV);
    EXPECT_EQ(g.rename(-1, "/data/inner/b.txt", -1, "/data/b.txt", 0), -EXDEV);
    EXPECT_EQ(g.rename(-1, "/data/a.txt", -1, "/etc/a.txt", 0), -EXDEV);
    EXPECT_EQ(g.rename(-1, "/ro/ro.txt", -1, "/data/ro.txt", 0), -EXDEV);
    EXPECT_EQ(g.link(-1, "/data/a.txt", -1, "/data/inner/a_link", false), -EXDEV);
    EXPECT_EQ(g.link(-1, "/data/a.txt", -1, "/data/inner/a_link", true), -EXDEV);
    EXPECT_EQ(g.link(-1, "/etc/hostname", -1, "/data/stolen", false), -EXDEV);
    EXPECT_EQ(g.link(-1, "/ro/ro.txt", -1, "/data/inner/ro_link", true), -EXDEV);
    EXPECT_FALSE(fs::exists(b / "moved.txt"));
    EXPECT_FALSE(fs::exists(b / "a_link"));
    EXPECT_FALSE(fs::exists(a / "stolen"));
    EXPECT_TRUE(fs::exists(a / "a.txt"));
    // Within one share they work; a read-only one refuses; through a
    // directory descriptor of b, a's names are not reachable.
    EXPECT_EQ(g.link(-1, "/data/a.txt", -1, "/data/a_link", false), 0);
    EXPECT_EQ(read_via(g, "/data/a_link"), "in a");
    EXPECT_EQ(g.link(-1, "/data/abs_to_root", -1, "/data/followed", true), -ENOENT); // followed inside a
    EXPECT_EQ(g.link(-1, "/data/abs_to_root", -1, "/data/the_link_itself", false), 0);
    EXPECT_TRUE(fs::is_symlink(a / "the_link_itself"));
    EXPECT_EQ(g.link(-1, "/ro/ro.txt", -1, "/ro/again", false), -EROFS);
    EXPECT_EQ(g.rename(-1, "/data/inner/b.txt", -1, "/data/inner/b2.txt", 0), 0);
    EXPECT_TRUE(fs::exists(b / "b2.txt"));
    const int inner = g.open(-1, "/data/inner", O_RDONLY | O_DIRECTORY, 0);
    ASSERT_GE(inner, 0);
    EXPECT_EQ(g.link(inner, "../a.txt", inner, "pulled", false), -ENOENT);
    EXPECT_EQ(g.rename(inner, "../a.txt", inner, "pulled", 0), -ENOENT);
    ::close(inner);
    EXPECT_FALSE(fs::exists(b / "pulled"));
}

TEST_F(Shares, SymlinksMadeInAShareStayInIt) {
    const GuestFs g = mounts();
    EXPECT_EQ(g.symlink("/data/inner/b.txt", -1, "/data/made"), 0);
    EXPECT_EQ(read_via(g, "/data/made"), kNoEnt); // resolved inside a, never into b
    EXPECT_EQ(g.symlink((top / "secret.txt").string(), -1, "/data/inner/out"), 0);
    EXPECT_EQ(read_via(g, "/data/inner/out"), kNoEnt);
    EXPECT_EQ(g.symlink("a.txt", -1, "/data/rel"), 0);
    EXPECT_EQ(read_via(g, "/data/rel"), "in a");
    EXPECT_EQ(g.symlink("x", -1, "/ro/link"), -EROFS);
    EXPECT_EQ(g.symlink("x", -1, "/etc/link"), -EROFS);
    EXPECT_EQ(g.symlink("x", -1, "/data/a.txt"), -EEXIST);
    EXPECT_EQ(g.symlink("", -1, "/data/empty"), -ENOENT);
}

} // namespace
} // namespace kvmgpu::linux_abi
