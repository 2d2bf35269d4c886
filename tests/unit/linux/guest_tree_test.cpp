// mkdir, unlink, rmdir and rename (GuestFs, ShareRoot): served in writable
// mounts, refused in the root and across mounts, and never out of a mount
// through "..", a symbolic link or a directory descriptor.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kvmtool-gpu/vmm/linux/root_fs.h"

namespace kvmgpu::linux_abi {
namespace {

namespace fs = std::filesystem;

struct Tree : ::testing::Test {
    fs::path top, root, share;
    void SetUp() override {
        char tmpl[] = "/tmp/kvmgpu-tree-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        top = tmpl;
        root = top / "root";
        share = top / "work";
        fs::create_directories(root / "etc");
        fs::create_directories(root / "mnt" / "work");
        fs::create_directories(share / "sub");
        std::ofstream(root / "etc" / "hostname") << "rootfile";
        std::ofstream(share / "data.txt") << "sharefile";
        std::ofstream(top / "outside.txt") << "host";
        fs::create_symlink(top, share / "out");                 // absolute: the share's own "top", not the host's
        fs::create_symlink(top / "outside.txt", share / "link"); // removing it removes the link only
    }
    void TearDown() override { fs::remove_all(top); }
    GuestFs mounts() const { return GuestFs({{"/", root, true, "--root"}, {"/mnt/work", share, false}}); }
};

TEST_F(Tree, MkdirUnlinkRenameInAShare) {
    const GuestFs g = mounts();
    EXPECT_EQ(g.mkdir(-1, "/mnt/work/new", 0755), 0);
    EXPECT_TRUE(fs::is_directory(share / "new"));
    EXPECT_EQ(g.mkdir(-1, "/mnt/work/new/", 0755), -EEXIST);
    EXPECT_EQ(g.rename(-1, "/mnt/work/data.txt", -1, "/mnt/work/new/moved.txt", 0), 0);
    EXPECT_TRUE(fs::exists(share / "new" / "moved.txt"));
    EXPECT_EQ(g.rename(-1, "/mnt/work/sub", -1, "/mnt/work/new", RENAME_NOREPLACE), -EEXIST);
    EXPECT_EQ(g.rename(-1, "/mnt/work/sub", -1, "/mnt/work/new", 8 /* RENAME_WHITEOUT */), -EINVAL);
    EXPECT_EQ(g.unlink(-1, "/mnt/work/new", false), -EISDIR);
    EXPECT_EQ(g.unlink(-1, "/mnt/work/new", true), -ENOTEMPTY);
    EXPECT_EQ(g.unlink(-1, "/mnt/work/new/moved.txt", false), 0);
    EXPECT_EQ(g.unlink(-1, "/mnt/work/new", true), 0);
    EXPECT_FALSE(fs::exists(share / "new"));
    EXPECT_EQ(g.unlink(-1, "/mnt/work/link", false), 0);
    EXPECT_TRUE(fs::exists(top / "outside.txt")) << "the link went, not what it named";
    EXPECT_EQ(g.unlink(-1, "/mnt/work/.", true), -EINVAL);
}

TEST_F(Tree, TheRootAndOtherMountsAreRefused) {
    const GuestFs g = mounts();
    EXPECT_EQ(g.mkdir(-1, "/etc/new", 0755), -EROFS);
    EXPECT_EQ(g.unlink(-1, "/etc/hostname", false), -EROFS);
    EXPECT_EQ(g.rename(-1, "/etc/hostname", -1, "/etc/other", 0), -EROFS);
    EXPECT_EQ(g.rename(-1, "/mnt/work/data.txt", -1, "/etc/data.txt", 0), -EXDEV);
    EXPECT_EQ(g.mkdir(-1, "/", 0755), -EROFS);
    EXPECT_TRUE(fs::exists(root / "etc" / "hostname"));
}

TEST_F(Tree, NothingLeavesTheShare) {
    const GuestFs g = mounts();
    // An absolute symbolic link resolves inside the share: its "top" is not there.
    EXPECT_EQ(g.mkdir(-1, "/mnt/work/out/escaped", 0755), -ENOENT);
    EXPECT_FALSE(fs::exists(top / "escaped"));
    EXPECT_EQ(g.unlink(-1, "/mnt/work/out/outside.txt", false), -ENOENT);
    // ".." from a directory descriptor stops at that directory (root_fs.h).
    const int sub = g.open(-1, "/mnt/work/sub", O_RDONLY | O_DIRECTORY, 0);
    ASSERT_GE(sub, 0);
    EXPECT_EQ(g.mkdir(sub, "../../../escaped", 0755), 0);
    EXPECT_FALSE(fs::exists(top / "escaped"));
    EXPECT_TRUE(fs::is_directory(share / "sub" / "escaped"));
    EXPECT_EQ(g.rename(sub, "escaped", sub, "../../../../stolen", 0), 0);
    EXPECT_FALSE(fs::exists(top / "stolen"));
    EXPECT_TRUE(fs::is_directory(share / "sub" / "stolen"));
    EXPECT_EQ(g.rename(sub, "../../data.txt", sub, "x", 0), -ENOENT) << "the share's data.txt is above the descriptor";
    close(sub);
    EXPECT_TRUE(fs::exists(top / "outside.txt"));
}

} // namespace
} // namespace kvmgpu::linux_abi
