// --share DIR[:GUEST_PATH][:ro], one flag's value, and several of them
// becoming one mount each (beside --root).
#include <gtest/gtest.h>

#include "kvmtool-gpu/util/arg_parser.h"
#include "kvmtool-gpu/cli/share_flag.h"

namespace kvmgpu::cli {
namespace {

TEST(ShareFlag, DirGuestPathAndMode) {
    const auto plain = parse_share_flag("/srv/data");
    EXPECT_EQ(plain.dir, "/srv/data");
    EXPECT_EQ(plain.guest_path, "");
    EXPECT_FALSE(plain.read_only);
    const auto at = parse_share_flag("/srv/data:/data:ro");
    EXPECT_EQ(at.dir, "/srv/data");
    EXPECT_EQ(at.guest_path, "/data");
    EXPECT_TRUE(at.read_only);
    const auto rw = parse_share_flag("rel/dir:/w:rw");
    EXPECT_EQ(rw.dir, "rel/dir");
    EXPECT_EQ(rw.guest_path, "/w");
    EXPECT_FALSE(rw.read_only);
    const auto colon = parse_share_flag("/srv/a:b:ro"); // no '/' after the colon: part of DIR
    EXPECT_EQ(colon.dir, "/srv/a:b");
    EXPECT_EQ(colon.guest_path, "");
    EXPECT_THROW(parse_share_flag(""), UsageError);
}

TEST(ShareFlag, EveryShareIsAMountAtItsOwnPath) {
    linux_abi::LinuxGuestOptions o;
    o.root_dir = "/";
    o.shares = {parse_share_flag("/srv/a:/data"), parse_share_flag("/srv/b:/data/inner:ro"),
                parse_share_flag("/srv/c")};
    const auto mounts = linux_abi::guest_mounts(o);
    ASSERT_EQ(mounts.size(), 4u);
    EXPECT_EQ(mounts[0].guest_path, "/");
    EXPECT_TRUE(mounts[0].read_only);
    EXPECT_EQ(mounts[1].guest_path, "/data");
    EXPECT_FALSE(mounts[1].read_only);
    EXPECT_EQ(mounts[2].guest_path, "/data/inner");
    EXPECT_EQ(mounts[2].host_dir, "/srv/b");
    EXPECT_TRUE(mounts[2].read_only);
    EXPECT_EQ(mounts[3].guest_path, "/srv/c"); // with --root: DIR's own path
    o.root_dir.clear();
    o.shares.resize(1);
    o.shares[0].guest_path.clear();
    EXPECT_EQ(linux_abi::guest_mounts(o).at(0).guest_path, "/"); // no root: the share is "/"
}

} // namespace
} // namespace kvmgpu::cli
