// The guest's libcuda (library_overlay.h): every libcuda.so* a mount holds,
// and the name in a default library directory of a root that has none, is
// the VMM's file, read-only; other names and directories are the mounts'.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/unit/linux/server_fixture.h"
#include "kvmtool-gpu/vmm/linux/root_fs.h"

namespace kvmgpu::linux_abi {
namespace {

using server_fixture::read_via;

namespace fs = std::filesystem;

struct Overlay : ::testing::Test {
    fs::path top, root, share, ours;
    void SetUp() override {
        char tmpl[] = "/tmp/kvmgpu-overlay-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        top = tmpl;
        root = top / "root";
        share = top / "work";
        ours = top / "vmm" / "libcuda.so.1";
        fs::create_directories(root / "usr/lib/x86_64-linux-gnu");
        fs::create_directories(root / "usr/local/cuda/lib64/stubs");
        fs::create_directories(share);
        fs::create_directories(ours.parent_path());
        std::ofstream(ours) << "ours";
        // The host driver's files as a driver package lays them out.
        std::ofstream(root / "usr/lib/x86_64-linux-gnu/libcuda.so.580.65") << "driver";
        fs::create_symlink("libcuda.so.580.65", root / "usr/lib/x86_64-linux-gnu/libcuda.so.1");
        std::ofstream(root / "usr/local/cuda/lib64/stubs/libcuda.so") << "stub";
        std::ofstream(root / "usr/lib/x86_64-linux-gnu/libcudart.so.13") << "cudart";
        std::ofstream(share / "libcuda.so") << "shared";
    }
    void TearDown() override { fs::remove_all(top); }
    GuestFs with_overlay() const {
        return GuestFs({{"/", root, true, "--root"}, {"/work", share, false}}, std::make_shared<LibraryOverlay>(ours));
    }
    std::string file(const fs::path& p) const {
        std::ifstream in(p);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
};

const std::string kNoEnt = "errno " + std::to_string(ENOENT);

TEST(LibraryOverlayNames, OnlyLibcudaSoAndItsVersions) {
    EXPECT_TRUE(LibraryOverlay::names_library("libcuda.so"));
    EXPECT_TRUE(LibraryOverlay::names_library("libcuda.so.1"));
    EXPECT_TRUE(LibraryOverlay::names_library("libcuda.so.580.65.06"));
    EXPECT_FALSE(LibraryOverlay::names_library("libcuda.so."));
    EXPECT_FALSE(LibraryOverlay::names_library("libcuda.sox"));
    EXPECT_FALSE(LibraryOverlay::names_library("libcudart.so.13"));
    EXPECT_FALSE(LibraryOverlay::names_library("xlibcuda.so"));
    EXPECT_FALSE(LibraryOverlay::names_library(""));
    EXPECT_TRUE(LibraryOverlay::in_default_search_dir("/lib/x86_64-linux-gnu/libcuda.so.1"));
    EXPECT_TRUE(LibraryOverlay::in_default_search_dir("/usr/lib64/libcuda.so.1"));
    EXPECT_FALSE(LibraryOverlay::in_default_search_dir("/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libcuda.so.1"));
    EXPECT_FALSE(LibraryOverlay::in_default_search_dir("/opt/libcuda.so.1"));
    EXPECT_THROW(LibraryOverlay("/nonexistent/libcuda.so.1"), std::runtime_error);
    EXPECT_THROW(LibraryOverlay("/tmp"), std::runtime_error); // a directory
}

TEST_F(Overlay, TheRootsLibcudaIsOurs) {
    const GuestFs g = with_overlay();
    EXPECT_EQ(read_via(g, "/usr/lib/x86_64-linux-gnu/libcuda.so.1"), "ours"); // the symlink to the driver
    EXPECT_EQ(read_via(g, "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65"), "ours");
    EXPECT_EQ(read_via(g, "/usr/local/cuda/lib64/stubs/libcuda.so"), "ours");
    EXPECT_EQ(read_via(g, "usr/local/cuda/lib64/../lib64/stubs/libcuda.so"), "ours");
    EXPECT_EQ(read_via(g, "/work/libcuda.so"), "ours"); // in a share too
    EXPECT_EQ(read_via(g, "/usr/lib/x86_64-linux-gnu/libcudart.so.13"), "cudart");
    const int dir = g.open(-1, "/usr/lib/x86_64-linux-gnu", O_RDONLY | O_DIRECTORY, 0);
    ASSERT_GE(dir, 0);
    EXPECT_EQ(read_via(g, "libcuda.so.1", dir), "ours"); // through a directory descriptor
    EXPECT_EQ(read_via(g, "libcuda.so.7", dir), kNoEnt); // nothing there, and its guest path is not known
    ::close(dir);

    const GuestFs plain({{"/", root, true, "--root"}});
    EXPECT_EQ(read_via(plain, "/usr/lib/x86_64-linux-gnu/libcuda.so.1"), "driver");
    EXPECT_EQ(read_via(plain, "/lib/x86_64-linux-gnu/libcuda.so.1"), kNoEnt);
}

TEST_F(Overlay, DefaultDirectoriesAnswerInAMinimalRoot) {
    const GuestFs g = with_overlay();
    for (const char* p : {"/lib/x86_64-linux-gnu/libcuda.so.1", "/lib/libcuda.so.1", "/usr/lib64/libcuda.so",
                          "/lib64/../usr/lib/libcuda.so.1"})
        EXPECT_EQ(read_via(g, p), "ours") << p; // none of these directories exists in the root
    EXPECT_EQ(read_via(g, "/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libcuda.so.1"), kNoEnt);
    EXPECT_EQ(read_via(g, "/opt/libcuda.so.1"), kNoEnt);
    EXPECT_EQ(read_via(g, "/lib/x86_64-linux-gnu/libcuda.so.1/"), kNoEnt); // a directory asked for
    EXPECT_EQ(read_via(g, "/lib/x86_64-linux-gnu/libcudart.so.13"), kNoEnt);
    struct stat st {}, want {};
    ASSERT_EQ(::stat(ours.c_str(), &want), 0);
    ASSERT_EQ(g.stat(-1, "/lib/libcuda.so.1", false, &st), 0);
    EXPECT_EQ(st.st_ino, want.st_ino);
    ASSERT_EQ(g.stat(-1, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", false, &st), 0); // lstat: not the driver's link
    EXPECT_EQ(st.st_ino, want.st_ino);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    char buf[64];
    EXPECT_EQ(g.readlink(-1, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", buf, sizeof buf), -EINVAL);
}

TEST_F(Overlay, NoWriteReachesIt) {
    const GuestFs g = with_overlay();
    for (const char* p : {"/lib/libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/work/libcuda.so"}) {
        EXPECT_EQ(g.open(-1, p, O_RDWR, 0), -EROFS) << p;
        EXPECT_EQ(g.open(-1, p, O_WRONLY | O_TRUNC, 0), -EROFS) << p;
        EXPECT_EQ(g.open(-1, p, O_RDONLY | O_CREAT, 0644), -EROFS) << p;
        EXPECT_EQ(g.open(-1, p, O_RDONLY | O_TRUNC, 0), -EROFS) << p;
        EXPECT_EQ(g.open(-1, p, O_RDONLY | O_DIRECTORY, 0), -ENOTDIR) << p;
        EXPECT_TRUE(g.read_only_at(-1, p)) << p;
    }
    EXPECT_FALSE(g.read_only_at(-1, "/work/other"));
    const int fd = g.open(-1, "/work/libcuda.so", O_RDONLY, 0);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::write(fd, "x", 1), -1); // the descriptor itself is read-only
    EXPECT_EQ(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
    ::close(fd);
    EXPECT_EQ(file(ours), "ours");
    EXPECT_EQ(file(share / "libcuda.so"), "shared"); // the share's own file untouched, only hidden
}

TEST_F(Overlay, EachOpenHasItsOwnOffset) {
    const GuestFs g = with_overlay();
    const int a = g.open(-1, "/lib/libcuda.so.1", O_RDONLY, 0);
    const int b = g.open(-1, "/lib/libcuda.so.1", O_RDONLY, 0);
    ASSERT_GE(a, 0);
    ASSERT_GE(b, 0);
    char c = 0;
    ASSERT_EQ(::read(a, &c, 1), 1);
    ASSERT_EQ(::read(a, &c, 1), 1);
    EXPECT_EQ(c, 'u');
    ASSERT_EQ(::read(b, &c, 1), 1);
    EXPECT_EQ(c, 'o');
    ::close(a);
    ::close(b);
}

} // namespace
} // namespace kvmgpu::linux_abi
