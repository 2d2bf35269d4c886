// The VMM's own streams lent to the guest (--stdio raw, host_stdio.h):
// bytes unchanged in both directions, stdout and stderr kept apart, a
// blocking read of stdin waiting outside the server's lock, the shell's
// file description untouched, terminals queried from a snapshot and never
// set, a vanished reader an EPIPE rather than the VMM's death.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

std::string drain(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0) return out;
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) return out;
        out.append(buf, static_cast<size_t>(n));
    }
}

struct HostStdioServer : Server {
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    void SetUp() override {
        ASSERT_EQ(::pipe(in), 0);
        ASSERT_EQ(::pipe(out), 0);
        ASSERT_EQ(::pipe(err), 0);
    }
    void lend() {
        options.stdio = HostStdio::take(in[0], out[1], err[1]);
        make(false);
    }
    void TearDown() override {
        server.reset();
        options.stdio.reset();
        for (int* p : {in, out, err})
            for (int i = 0; i < 2; ++i)
                if (p[i] >= 0) ::close(p[i]);
        Server::TearDown();
    }
};

TEST_F(HostStdioServer, BytesReachStdoutAndStderrUnchangedAndApart) {
    lend();
    const std::string bytes("a\x1b[2Jb\0c\n\r\x07", 10);
    std::memcpy(at(kBuf), bytes.data(), bytes.size());
    EXPECT_EQ(ret(SYS_write, 1, kBuf, bytes.size()), static_cast<int64_t>(bytes.size()));
    put(kBuf + 64, "to stderr");
    EXPECT_EQ(ret(SYS_write, 2, kBuf + 64, 9), 9);
    EXPECT_EQ(drain(out[0]), bytes);
    EXPECT_EQ(drain(err[0]), "to stderr");
    EXPECT_TRUE(console.empty()) << "the console saw: " << console;
    // /dev/stderr by path is the same stream.
    put(kBuf + 128, "/dev/stderr");
    const int64_t fd = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf + 128, O_WRONLY);
    ASSERT_GE(fd, 3);
    EXPECT_EQ(ret(SYS_write, static_cast<uint64_t>(fd), kBuf + 64, 2), 2);
    EXPECT_EQ(drain(err[0]), "to");
}

TEST_F(HostStdioServer, StdinIsReadAsIsAndEndsWhenTheWriterCloses) {
    lend();
    ASSERT_EQ(::write(in[1], "line one\n\x04\xff", 11), 11);
    EXPECT_EQ(ret(SYS_read, 0, kBuf, 100), 11);
    EXPECT_EQ(std::memcmp(at(kBuf), "line one\n\x04\xff", 11), 0);
    ::close(in[1]);
    in[1] = -1;
    EXPECT_EQ(ret(SYS_read, 0, kBuf, 100), 0);
}

TEST_F(HostStdioServer, TheShellsDescriptionKeepsItsFlags) {
    lend();
    EXPECT_EQ(::fcntl(in[0], F_GETFL) & O_NONBLOCK, 0) << "the guest's stdin must be a description of the VMM's own";
    // O_NONBLOCK set by the guest is the guest's.
    EXPECT_EQ(ret(SYS_fcntl, 0, F_SETFL, O_NONBLOCK), 0);
    EXPECT_EQ(ret(SYS_read, 0, kBuf, 100), -EAGAIN);
    EXPECT_EQ(::fcntl(in[0], F_GETFL) & O_NONBLOCK, 0);
}

TEST_F(HostStdioServer, ABlockingReadWaitsOutsideTheServerLock) {
    lend();
    // The read waits for data another guest thread's call provides; under
    // the server's lock that call could not run. A deadlock detector, not a timing.
    auto reader = std::async(std::launch::async, [&] { return ret(SYS_read, 0, kBuf, 100); });
    std::promise<int64_t> pid;
    std::thread other([&] { pid.set_value(ret(SYS_getpid)); });
    ASSERT_EQ(pid.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
    other.join();
    ASSERT_EQ(::write(in[1], "late", 4), 4);
    ASSERT_EQ(reader.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    EXPECT_EQ(reader.get(), 4);
}

TEST_F(HostStdioServer, AGoneReaderIsEpipeNotTheVmmsEnd) {
    lend();
    ::close(out[0]);
    out[0] = -1;
    put(kBuf, "x");
    EXPECT_EQ(ret(SYS_write, 1, kBuf, 1), -EPIPE);
}

TEST_F(HostStdioServer, PipesAreNoTerminalAndStatAsPipes) {
    lend();
    EXPECT_EQ(ret(SYS_ioctl, 1, TCGETS, kBuf), -ENOTTY);
    EXPECT_EQ(ret(SYS_fstat, 1, kBuf), 0);
    struct stat st {};
    std::memcpy(&st, at(kBuf), sizeof st);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    put(kBuf + 256, "/proc/self/fd/2");
    const int64_t n = ret(SYS_readlink, kBuf + 256, kBuf, 64);
    ASSERT_GT(n, 0);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(at(kBuf)), 5), "pipe:");
}

TEST_F(HostStdioServer, ARegularFileStdinSharesTheShellsOffset) {
    char path[] = "/tmp/kvmgpu-stdin-XXXXXX";
    const int file = ::mkstemp(path);
    ASSERT_GE(file, 0);
    ::unlink(path);
    ASSERT_EQ(::write(file, "0123456789", 10), 10);
    ASSERT_EQ(::lseek(file, 2, SEEK_SET), 2);
    options.stdio = HostStdio::take(file, out[1], err[1]);
    make(false);
    EXPECT_EQ(ret(SYS_read, 0, kBuf, 3), 3);
    EXPECT_EQ(std::memcmp(at(kBuf), "234", 3), 0);
    EXPECT_EQ(::lseek(file, 0, SEEK_CUR), 5); // as a native program would leave it
    server.reset();
    ::close(file);
}

TEST_F(HostStdioServer, ATerminalIsQueriedFromTheSnapshotAndNeverSet) {
    int master = -1, slave = -1;
    winsize ws{};
    ws.ws_row = 33;
    ws.ws_col = 101;
    if (::openpty(&master, &slave, nullptr, nullptr, &ws) != 0) GTEST_SKIP() << "no pseudo-terminal here: " << std::strerror(errno);
    options.stdio = HostStdio::take(in[0], slave, err[1]);
    make(false);
    termios host{};
    ASSERT_EQ(::tcgetattr(slave, &host), 0);
    EXPECT_EQ(ret(SYS_ioctl, 1, TCGETS, kBuf), 0);
    uint32_t lflag = 0; // c_lflag: the fourth word of the kernel's struct termios
    std::memcpy(&lflag, at(kBuf + 12), 4);
    EXPECT_EQ(lflag, host.c_lflag);
    EXPECT_EQ(ret(SYS_ioctl, 1, TIOCGWINSZ, kBuf), 0);
    winsize got{};
    std::memcpy(&got, at(kBuf), sizeof got);
    EXPECT_EQ(got.ws_row, 33);
    EXPECT_EQ(got.ws_col, 101);
    // Nothing that changes the terminal or feeds it input.
    EXPECT_EQ(ret(SYS_ioctl, 1, TCSETS, kBuf), -EPERM);
    put(kBuf, "x");
    EXPECT_EQ(ret(SYS_ioctl, 1, TIOCSTI, kBuf), -EPERM);
    EXPECT_EQ(ret(SYS_ioctl, 2, TCGETS, kBuf), -ENOTTY); // stderr is still the pipe
    server.reset();
    ::close(master);
    ::close(slave);
}

TEST_F(Server, WithoutLentStreamsStdinIsEmptyAndOutputIsTheConsoles) {
    make(false);
    EXPECT_EQ(ret(SYS_read, 0, kBuf, 10), 0);
    put(kBuf, "x\x1b");
    EXPECT_EQ(ret(SYS_write, 2, kBuf, 2), 2);
    EXPECT_EQ(console, "x\x1b"); // the console's sink escapes it, not the server
    EXPECT_EQ(ret(SYS_ioctl, 1, TCGETS, kBuf), -ENOTTY);
}

// sendfile (cat's way of copying): from a file to the console, a lent
// stream or a pipe, moving the file's offset or the caller's by what was
// written; nothing but a regular file as its source.
TEST_F(Server, SendfileCopiesAFileWhereverItsOutputIs) {
    make(true);
    put(kBuf, "in.txt");
    const int64_t in = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY);
    ASSERT_GE(in, 3);
    EXPECT_EQ(ret(SYS_sendfile, 1, static_cast<uint64_t>(in), 0, 4), 4);
    EXPECT_EQ(console, "0123");
    EXPECT_EQ(ret(SYS_lseek, static_cast<uint64_t>(in), 0, SEEK_CUR), 4);
    // With an offset: it moves, the file's does not.
    const int64_t at3 = 3;
    std::memcpy(at(kBuf + 64), &at3, 8);
    EXPECT_EQ(ret(SYS_sendfile, 2, static_cast<uint64_t>(in), kBuf + 64, 100), 7);
    EXPECT_EQ(console, "01233456789");
    int64_t moved = 0;
    std::memcpy(&moved, at(kBuf + 64), 8);
    EXPECT_EQ(moved, 10);
    EXPECT_EQ(ret(SYS_lseek, static_cast<uint64_t>(in), 0, SEEK_CUR), 4);
    // Into a pipe, then from the pipe (no file: EINVAL).
    ASSERT_EQ(ret(SYS_pipe2, kBuf + 128, 0), 0);
    int32_t p[2];
    std::memcpy(p, at(kBuf + 128), sizeof p);
    EXPECT_EQ(ret(SYS_sendfile, static_cast<uint64_t>(p[1]), static_cast<uint64_t>(in), 0, 3), 3);
    EXPECT_EQ(ret(SYS_read, static_cast<uint64_t>(p[0]), kBuf + 256, 16), 3);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(at(kBuf + 256)), 3), "456");
    EXPECT_EQ(ret(SYS_sendfile, 1, static_cast<uint64_t>(p[0]), 0, 3), -EINVAL);
    EXPECT_EQ(ret(SYS_sendfile, 1, 99, 0, 3), -EBADF);
    EXPECT_EQ(ret(SYS_sendfile, 0, static_cast<uint64_t>(in), 0, 3), -EBADF); // stdin is no output
    EXPECT_EQ(ret(SYS_sendfile, 1, static_cast<uint64_t>(in), 8, 3), -EFAULT);  // a hostile offset pointer
    EXPECT_EQ(ret(SYS_sendfile, 1, static_cast<uint64_t>(in), 0, 0), 0);
}

TEST_F(HostStdioServer, SendfileReachesTheLentStdout) {
    options.stdio = HostStdio::take(in[0], out[1], err[1]);
    make(true);
    put(kBuf, "in.txt");
    const int64_t file = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf, O_RDONLY);
    ASSERT_GE(file, 3);
    EXPECT_EQ(ret(SYS_sendfile, 1, static_cast<uint64_t>(file), 0, 100), 10);
    EXPECT_EQ(drain(out[0]), "0123456789");
    EXPECT_TRUE(console.empty());
}

} // namespace
} // namespace kvmgpu::linux_abi
