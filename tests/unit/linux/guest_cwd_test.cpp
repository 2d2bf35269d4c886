// The cwd's own pieces (guest_cwd.h): joining a relative path, the guest
// path a host directory is seen at (GuestFs::guest_path_of), and the
// directory a guest starts in (guest_start_cwd: --cwd checked, the default
// taken from the host's current directory).
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "kvmtool-gpu/vmm/linux/guest_cwd.h"
#include "kvmtool-gpu/vmm/linux/linux_process.h"

namespace kvmgpu::linux_abi {
namespace {

namespace fs = std::filesystem;

TEST(GuestCwdJoin, LeadingDotsAreTakenTheRestIsKept) {
    EXPECT_EQ(GuestCwd::join("/a/b", "c"), "/a/b/c");
    EXPECT_EQ(GuestCwd::join("/", "c/d"), "/c/d");
    EXPECT_EQ(GuestCwd::join("/a/b", "."), "/a/b");
    EXPECT_EQ(GuestCwd::join("/a/b", "./"), "/a/b");
    EXPECT_EQ(GuestCwd::join("/a/b", ".."), "/a");
    EXPECT_EQ(GuestCwd::join("/a/b", "../.."), "/");
    EXPECT_EQ(GuestCwd::join("/a/b", "../../../../x"), "/x") << "\"..\" at / stays at /";
    EXPECT_EQ(GuestCwd::join("/a", ".//..//./c"), "/c");
    EXPECT_EQ(GuestCwd::join("/a/b", "../c/../d"), "/a/c/../d") << "after a name, \"..\" is the kernel's (a link)";
    EXPECT_EQ(GuestCwd::join("/a/b", "c/"), "/a/b/c/") << "a trailing slash still asks for a directory";
    EXPECT_EQ(GuestCwd::join("/a/b", "..."), "/a/b/...");
    EXPECT_EQ(GuestCwd::join("/a/b", "..x"), "/a/b/..x");
}

struct Dirs : ::testing::Test {
    fs::path top, share;
    fs::path saved_cwd = fs::current_path();
    std::string saved_pwd = std::getenv("PWD") ? std::getenv("PWD") : "";
    void SetUp() override {
        char tmpl[] = "/tmp/kvmgpu-cwd-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        top = fs::canonical(tmpl);
        share = top / "share";
        fs::create_directories(share / "sub" / "deeper");
        fs::create_directories(top / "other");
        fs::create_directory_symlink(share / "sub", top / "link_to_sub");
    }
    void TearDown() override {
        fs::current_path(saved_cwd);
        ::setenv("PWD", saved_pwd.c_str(), 1);
        fs::remove_all(top);
    }
    // The process's cwd moved to `d`, $PWD as a shell would set it.
    void cd(const fs::path& d, const std::string& pwd = "") {
        fs::current_path(d);
        ::setenv("PWD", (pwd.empty() ? d.string() : pwd).c_str(), 1);
    }
    int open_dir(const GuestFs& g, const std::string& p) { return g.open(-1, p, O_RDONLY | O_DIRECTORY, 0); }
};

TEST_F(Dirs, GuestPathOfAHostDirectory) {
    const GuestFs g({{"/", share, false}});
    const int sub = open_dir(g, "/sub/deeper/..");
    ASSERT_GE(sub, 0);
    EXPECT_EQ(g.guest_path_of(sub), "/sub");
    const int root = open_dir(g, "/");
    EXPECT_EQ(g.guest_path_of(root), "/");
    const int other = ::open(top.c_str(), O_RDONLY | O_DIRECTORY);
    EXPECT_EQ(g.guest_path_of(other), "") << "a directory out of every mount has no guest path";
    // A share at /mnt/s under a root: its directories' paths carry the mount point.
    const GuestFs both({{"/", top / "other", true, "--root"}, {"/mnt/s", share, false}});
    const int deeper = open_dir(both, "/mnt/s/sub/deeper");
    ASSERT_GE(deeper, 0);
    EXPECT_EQ(both.guest_path_of(deeper), "/mnt/s/sub/deeper");
    ::close(sub), ::close(root), ::close(other), ::close(deeper);
}

TEST_F(Dirs, ADeeperMountHidesTheSamePathBelowIt) {
    // --root top with a share at /share holding another directory: the root's
    // own /share/sub is not seen at "/share/sub".
    fs::create_directories(top / "elsewhere" / "sub");
    const GuestFs g({{"/", top, true, "--root"}, {"/share", top / "elsewhere", false}});
    const int hidden = ::open((share / "sub").c_str(), O_RDONLY | O_DIRECTORY);
    EXPECT_EQ(g.guest_path_of(hidden), "");
    EXPECT_EQ(visible_at_same_path(g, (share / "sub").string()), "");
    ::close(hidden);
}

TEST_F(Dirs, VisibleAtTheSamePath) {
    const GuestFs own_path({{share.string(), share, false}});
    EXPECT_EQ(visible_at_same_path(own_path, (share / "sub").string()), (share / "sub").string());
    EXPECT_EQ(visible_at_same_path(own_path, top.string()), "") << "above the share: not in the guest";
    const GuestFs at_root({{"/", share, false}});
    EXPECT_EQ(visible_at_same_path(at_root, (share / "sub").string()), "") << "there it is /sub";
    EXPECT_EQ(visible_at_same_path(at_root, "relative"), "");
}

TEST_F(Dirs, TheDefaultIsTheHostsCwdWhereTheGuestSeesIt) {
    LinuxGuestOptions o;
    o.shares = {{share.string()}}; // with a root, mounted at its own path
    o.root_dir = (top / "other").string();
    cd(share / "sub");
    EXPECT_EQ(guest_start_cwd(o), (share / "sub").string());
    // $PWD through a link names the same directory: the user's name for it.
    cd(top / "link_to_sub", (top / "link_to_sub").string());
    EXPECT_EQ(guest_start_cwd(o), (share / "sub").string()) << "the link is not in the guest: the physical path";
    o.root_dir = "/";
    EXPECT_EQ(guest_start_cwd(o), (top / "link_to_sub").string()) << "with --root / the link is there too";
    // A stale $PWD is not believed.
    cd(share, (top / "other").string());
    EXPECT_EQ(guest_start_cwd(o), share.string());
    // Not in the guest at the same path: "/".
    o.root_dir.clear();
    o.shares[0].guest_path = "/work";
    cd(share / "sub");
    EXPECT_EQ(guest_start_cwd(o), "/");
    o.shares.clear();
    EXPECT_EQ(guest_start_cwd(o), "/") << "no files";
}

TEST_F(Dirs, CwdMustNameADirectoryInTheMounts) {
    LinuxGuestOptions o;
    o.shares = {{share.string(), "/work"}};
    o.cwd = "/work/sub/deeper/../";
    EXPECT_EQ(guest_start_cwd(o), "/work/sub");
    for (const char* bad : {"/work/none", "work/sub", "/etc"}) {
        o.cwd = bad;
        EXPECT_THROW(guest_start_cwd(o), std::invalid_argument) << bad;
    }
    std::ofstream(share / "file");
    o.cwd = "/work/file";
    try {
        guest_start_cwd(o);
        ADD_FAILURE() << "a file taken as --cwd";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "--cwd /work/file: not a directory in the guest's mounts");
    }
    o.cwd = "/";
    EXPECT_EQ(guest_start_cwd(o), "/") << "/ always";
    o.shares.clear();
    o.cwd = "/work";
    EXPECT_THROW(guest_start_cwd(o), std::invalid_argument) << "no files";
    // The private temporary directory exists only once the VM is made: taken by name.
    o.root_dir = (top / "other").string();
    o.cwd = kPrivateTmpGuestPath;
    EXPECT_EQ(guest_start_cwd(o), kPrivateTmpGuestPath);
}

} // namespace
} // namespace kvmgpu::linux_abi
