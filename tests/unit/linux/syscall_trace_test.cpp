// --trace-syscalls: the lines the server writes for the calls it serves.
#include "kvmtool-gpu/vmm/linux/syscall_trace.h"

#include <sys/syscall.h>

#include <fstream>
#include <sstream>

#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

struct SyscallTraceTest : Server {
    std::filesystem::path trace_path;
    void SetUp() override {
        char tmpl[] = "/tmp/kvmgpu-trace-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        trace_path = std::filesystem::path(tmpl) / "trace.txt";
        options.trace = SyscallTrace::open(trace_path);
    }
    void TearDown() override {
        Server::TearDown();
        std::filesystem::remove_all(trace_path.parent_path());
    }
    std::vector<std::string> lines() {
        std::ifstream in(trace_path);
        std::vector<std::string> out;
        for (std::string l; std::getline(in, l);) out.push_back(l);
        return out;
    }
};

TEST_F(SyscallTraceTest, PathsAsStringsResultsAndErrnoNames) {
    make(true);
    put(kBuf, "in.txt");
    put(kBuf + 64, "missing\"\n");
    const int64_t fd = ret(SYS_openat, static_cast<uint64_t>(AT_FDCWD), kBuf, O_RDONLY, 0);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(ret(SYS_openat, static_cast<uint64_t>(AT_FDCWD), kBuf + 64, O_RDONLY, 0), -ENOENT);
    EXPECT_EQ(ret(SYS_close, 999), -EBADF);
    ret(SYS_getpid);
    const auto l = lines();
    ASSERT_EQ(l.size(), 4u);
    EXPECT_EQ(l[0], "1 openat(0xffffffffffffff9c, \"in.txt\", 0, 0) = " + std::to_string(fd));
    EXPECT_EQ(l[1], "1 openat(0xffffffffffffff9c, \"missing\\\"\\x0a\", 0, 0) = -1 ENOENT (No such file or directory)");
    EXPECT_EQ(l[2], "1 close(0x3e7) = -1 EBADF (Bad file descriptor)");
    EXPECT_EQ(l[3], "1 getpid() = 1");
}

TEST_F(SyscallTraceTest, UnreadablePathShownAsItsAddress) {
    make(true);
    EXPECT_EQ(ret(SYS_openat, static_cast<uint64_t>(AT_FDCWD), 16, O_RDONLY, 0), -EFAULT);
    const auto l = lines();
    ASSERT_EQ(l.size(), 1u);
    EXPECT_EQ(l[0], "1 openat(0xffffffffffffff9c, 0x10, 0, 0) = -1 EFAULT (Bad address)");
}

TEST(SyscallTraceOpen, UnwritablePathIsOneLineNamingTheFlag) {
    try {
        SyscallTrace::open("/nonexistent-dir/trace.txt");
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "--trace-syscalls /nonexistent-dir/trace.txt: No such file or directory");
    }
}

} // namespace
} // namespace kvmgpu::linux_abi
