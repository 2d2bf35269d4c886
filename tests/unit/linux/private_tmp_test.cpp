// A guest with a read-only root gets a writable temporary directory of its
// own unless a share is at /tmp; the directory goes with the VM.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
#include <fstream>

#include "kvmtool-gpu/vmm/linux/linux_process.h"
#include "kvmtool-gpu/vmm/linux/private_tmp.h"
#include "kvmtool-gpu/vmm/linux/root_fs.h"

namespace kvmgpu::linux_abi {
namespace {

namespace fs = std::filesystem;

TEST(PrivateTmp, OnlyWithARootAndNoShareAtTmp) {
    LinuxGuestOptions o;
    EXPECT_FALSE(wants_private_tmp(o)) << "no root: the guest sees no files at all";
    o.root_dir = "/";
    EXPECT_TRUE(wants_private_tmp(o));
    o.shares = {{"/srv/work", "", false}};
    EXPECT_TRUE(wants_private_tmp(o)) << "a share elsewhere";
    o.shares.push_back({"/srv/scratch", "/tmp/", false});
    EXPECT_FALSE(wants_private_tmp(o)) << "the user's second share is the guest's /tmp";
    o.shares = {{"/tmp", "", false}};
    EXPECT_FALSE(wants_private_tmp(o)) << "a share of /tmp lands at /tmp with --root";
}

TEST(PrivateTmp, WritableUnderAReadOnlyRootAndGoneWithTheVm) {
    char tmpl[] = "/tmp/kvmgpu-root-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const fs::path root = tmpl;
    fs::create_directories(root / "tmp");
    std::string host_dir;
    {
        auto tmp = PrivateTmp::create();
        host_dir = tmp->host_dir();
        struct stat st{};
        ASSERT_EQ(stat(host_dir.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0700u);
        LinuxGuestOptions o;
        o.root_dir = root.string();
        GuestFs guest(guest_mounts(o, host_dir));
        const int fd = guest.open(-1, std::string(kPrivateTmpGuestPath) + "/made-by-guest", O_CREAT | O_WRONLY, 0600);
        ASSERT_GE(fd, 0) << std::strerror(-fd);
        ASSERT_EQ(write(fd, "x", 1), 1);
        close(fd);
        EXPECT_TRUE(fs::exists(fs::path(host_dir) / "made-by-guest"));
        EXPECT_FALSE(fs::exists(root / "tmp" / "made-by-guest")) << "the root's own /tmp untouched";
        std::ofstream(root / "tmp" / "hosts-file") << "z";
        struct stat seen{};
        EXPECT_EQ(guest.stat(-1, "/tmp/hosts-file", true, &seen), 0) << "the root's /tmp stays visible around it";
        EXPECT_EQ(guest.open(-1, "/tmp/new-file", O_CREAT | O_WRONLY, 0600), -EROFS) << "and read-only";
        EXPECT_EQ(guest.open(-1, "/etc-new", O_CREAT | O_WRONLY, 0600), -EROFS) << "the root stays read-only";
        std::ofstream(fs::path(host_dir) / "nested-file") << "y";
        fs::create_directories(fs::path(host_dir) / "d" / "e");
    }
    EXPECT_FALSE(fs::exists(host_dir)) << "removed with everything in it";
    fs::remove_all(root);
}

} // namespace
} // namespace kvmgpu::linux_abi
