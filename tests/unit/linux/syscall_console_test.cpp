// Console writes: one call takes at most kConsoleChunk bytes (a short count,
// so the guest's loop comes back and the VM can be stopped between calls),
// and the console is written after the server's lock is released, so a
// slow console never holds other threads' calls.
#include <sys/syscall.h>
#include <sys/uio.h>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

TEST_F(Server, OneConsoleWriteTakesAtMostAChunk) {
    make(false);
    std::memset(at(kBuf), '\n', kMiB);
    EXPECT_EQ(ret(SYS_write, 1, kBuf, kMiB), static_cast<int64_t>(kConsoleChunk));
    EXPECT_EQ(console.size(), kConsoleChunk);
    // writev: the chunk is the whole call's, however many vectors.
    const iovec iov[3] = {{reinterpret_cast<void*>(kBuf), kConsoleChunk - 10},
                          {reinterpret_cast<void*>(kBuf), 100},
                          {reinterpret_cast<void*>(kBuf), 100}};
    std::memcpy(at(kBuf + kMiB - 4096), iov, sizeof iov);
    console.clear();
    EXPECT_EQ(ret(SYS_writev, 2, kBuf + kMiB - 4096, 3), static_cast<int64_t>(kConsoleChunk));
    EXPECT_EQ(console.size(), kConsoleChunk);
    EXPECT_EQ(ret(SYS_write, 1, kBuf, 5), 5); // the next call starts a fresh chunk
}

TEST_F(Server, TheConsoleIsWrittenOutsideTheServerLock) {
    // The sink waits for another thread's call: under the server's lock that
    // call could not run. The wait is a deadlock detector, not a timing.
    std::promise<int64_t> other_result;
    std::thread other;
    bool other_ran = false;
    options.console_text = [&](std::string_view) {
        other = std::thread([&] { other_result.set_value(ret(SYS_getpid)); });
        other_ran = other_result.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    };
    make(false);
    put(kBuf, "x");
    EXPECT_EQ(ret(SYS_write, 1, kBuf, 1), 1);
    other.join(); // before the fix, the call ran once the write let go of the lock
    EXPECT_TRUE(other_ran);
}

} // namespace
} // namespace kvmgpu::linux_abi
