// run --vms N --share DIR: each VM's writable root is its own DIR/vm<i>;
// a read-only share, or a single VM, is DIR itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kvmtool-gpu/cli/vm_share.h"

namespace kvmgpu::cli {
namespace {

namespace fs = std::filesystem;

struct VmShare : ::testing::Test {
    fs::path dir;
    void SetUp() override {
        char tmpl[] = "/tmp/kvmgpu-vmshare-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override { fs::remove_all(dir); }
};

TEST_F(VmShare, EachWritableVmGetsItsOwnSubdirectory) {
    EXPECT_EQ(share_dir_for_vm(dir, false, 0, 3), (dir / "vm0").string());
    EXPECT_EQ(share_dir_for_vm(dir, false, 2, 3), (dir / "vm2").string());
    EXPECT_TRUE(fs::is_directory(dir / "vm0"));
    EXPECT_TRUE(fs::is_directory(dir / "vm2"));
    EXPECT_EQ(share_dir_for_vm(dir, false, 0, 3), (dir / "vm0").string()); // there already: reused
}

TEST_F(VmShare, ReadOnlyOrSingleVmSharesTheDirectoryItself) {
    EXPECT_EQ(share_dir_for_vm(dir, true, 1, 4), dir.string());
    EXPECT_EQ(share_dir_for_vm(dir, false, 0, 1), dir.string());
    EXPECT_EQ(share_dir_for_vm("", false, 1, 4), "");
    EXPECT_FALSE(fs::exists(dir / "vm1"));
}

TEST_F(VmShare, ANonDirectoryInTheWayIsAnError) {
    std::ofstream(dir / "vm1") << "a file";
    EXPECT_THROW(share_dir_for_vm(dir, false, 1, 2), std::runtime_error);
    fs::create_symlink(dir / "vm0", dir / "vm3");
    fs::create_directory(dir / "vm0");
    EXPECT_THROW(share_dir_for_vm(dir, false, 3, 4), std::runtime_error); // a symlink is not the VM's own
    EXPECT_THROW(share_dir_for_vm((dir / "absent").string(), false, 0, 2), std::runtime_error);
}

} // namespace
} // namespace kvmgpu::cli
