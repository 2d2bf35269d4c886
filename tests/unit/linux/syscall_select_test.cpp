// select and pselect6 as the server serves them: readiness of pipes and the
// console as bits, a wait woken by another thread's write, time-outs (the
// time left written back), and the sets as hostile input: nfds negative or
// past the table, a bit for a closed descriptor, sets and time-outs that
// are not the guest's memory, pselect6's signal-mask pair.
#include <poll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

constexpr uint64_t kRead = kBuf + 4096, kWrite = kBuf + 4352, kExcept = kBuf + 4608, kTime = kBuf + 6000,
                   kMaskPair = kBuf + 6100, kMask = kBuf + 6200;

struct Select : Server {
    std::pair<int32_t, int32_t> pipe() {
        EXPECT_EQ(ret(SYS_pipe2, kBuf, 0), 0);
        int32_t fds[2];
        std::memcpy(fds, at(kBuf), sizeof fds);
        return {fds[0], fds[1]};
    }
    void set_bits(uint64_t gpa, std::initializer_list<int> fds) {
        std::memset(at(gpa), 0, 256);
        for (int fd : fds) at(gpa)[fd / 8] |= static_cast<uint8_t>(1u << (fd % 8));
    }
    bool bit(uint64_t gpa, int fd) { return at(gpa)[fd / 8] >> (fd % 8) & 1; }
    void put_timeval(int64_t sec, int64_t usec) {
        const timeval tv{sec, usec};
        std::memcpy(at(kTime), &tv, sizeof tv);
    }
    int64_t select(int64_t nfds, uint64_t r, uint64_t w, uint64_t e, uint64_t t) {
        return ret(SYS_select, static_cast<uint64_t>(nfds), r, w, e, t);
    }
};

TEST_F(Select, ReadinessComesBackAsBits) {
    make(false);
    auto [r, w] = pipe();
    set_bits(kRead, {0, r});
    set_bits(kWrite, {1, w});
    set_bits(kExcept, {r});
    put_timeval(0, 0);
    // stdin (end of file) is readable, stdout and the pipe's write end writable, the empty pipe not readable.
    EXPECT_EQ(select(w + 1, kRead, kWrite, kExcept, kTime), 3);
    EXPECT_TRUE(bit(kRead, 0));
    EXPECT_FALSE(bit(kRead, r));
    EXPECT_TRUE(bit(kWrite, 1));
    EXPECT_TRUE(bit(kWrite, w));
    EXPECT_FALSE(bit(kExcept, r));
    put(kBuf + 512, "x");
    ASSERT_EQ(ret(SYS_write, w, kBuf + 512, 1), 1);
    set_bits(kRead, {r});
    EXPECT_EQ(select(r + 1, kRead, 0, 0, 0), 1); // no time-out: waits, and the pipe is ready
    EXPECT_TRUE(bit(kRead, r));
    // The write end closed: the read end is readable (end of file) with nothing in it.
    ASSERT_EQ(ret(SYS_read, r, kBuf + 512, 1), 1);
    ASSERT_EQ(ret(SYS_close, w), 0);
    set_bits(kRead, {r});
    EXPECT_EQ(select(r + 1, kRead, 0, 0, 0), 1);
}

TEST_F(Select, AWaitEndsAtAnotherThreadsWrite) {
    make(false);
    auto [r, w] = pipe();
    set_bits(kRead, {r});
    std::thread writer([&, w = w] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        put(kBuf + 512, "y");
        EXPECT_EQ(ret(SYS_write, w, kBuf + 512, 1), 1);
    });
    EXPECT_EQ(select(r + 1, kRead, 0, 0, 0), 1);
    EXPECT_TRUE(bit(kRead, r));
    writer.join();
}

TEST_F(Select, TimeOutsEndInZeroWithTheTimeLeftWrittenBack) {
    make(false);
    auto [r, w] = pipe();
    set_bits(kRead, {r});
    put_timeval(0, 20'000);
    EXPECT_EQ(select(r + 1, kRead, 0, 0, kTime), 0);
    EXPECT_FALSE(bit(kRead, r)); // cleared: not ready
    timeval left{};
    std::memcpy(&left, at(kTime), sizeof left);
    EXPECT_EQ(left.tv_sec, 0);
    EXPECT_EQ(left.tv_usec, 0);
    put_timeval(0, 2'000'000); // whole seconds in tv_usec are carried, as Linux does
    set_bits(kWrite, {w});
    EXPECT_EQ(select(w + 1, 0, kWrite, 0, kTime), 1);
    std::memcpy(&left, at(kTime), sizeof left);
    EXPECT_GE(left.tv_sec, 0);
    EXPECT_LT(left.tv_usec, 1'000'000);
    put_timeval(-1, 0);
    EXPECT_EQ(select(w + 1, 0, kWrite, 0, kTime), -EINVAL);
    put_timeval(0, -1);
    EXPECT_EQ(select(w + 1, 0, kWrite, 0, kTime), -EINVAL);
    EXPECT_EQ(select(0, 0, 0, 0, kTime), -EINVAL) << "the time-out is read first";
    put_timeval(0, 1000);
    EXPECT_EQ(select(0, 0, 0, 0, kTime), 0) << "a sleep";
    // pselect6: a timespec, checked as ppoll's.
    const timespec ts{0, 1'000'000'000};
    std::memcpy(at(kTime), &ts, sizeof ts);
    EXPECT_EQ(ret(SYS_pselect6, w + 1, 0, kWrite, 0, kTime, 0), -EINVAL);
    const timespec ok{0, 5'000'000};
    std::memcpy(at(kTime), &ok, sizeof ok);
    set_bits(kRead, {r});
    EXPECT_EQ(ret(SYS_pselect6, r + 1, kRead, 0, 0, kTime, 0), 0);
    timespec ts_left{};
    std::memcpy(&ts_left, at(kTime), sizeof ts_left);
    EXPECT_EQ(ts_left.tv_sec, 0);
    EXPECT_EQ(ts_left.tv_nsec, 0);
}

TEST_F(Select, HostileSetsAndArguments) {
    make(false);
    auto [r, w] = pipe();
    set_bits(kRead, {r});
    EXPECT_EQ(select(-1, kRead, 0, 0, 0), -EINVAL);
    set_bits(kRead, {r, 200}); // 200 is not open
    EXPECT_EQ(select(201, kRead, 0, 0, 0), -EBADF);
    set_bits(kWrite, {w, w + 1});
    EXPECT_EQ(select(w + 2, 0, kWrite, 0, 0), -EBADF) << "w + 1 is below nfds and not open";
    set_bits(kWrite, {w, 100});
    EXPECT_EQ(select(w + 1, 0, kWrite, 0, 0), 1) << "bits at or past nfds are not looked at";
    // Past the descriptor table nfds is the table: the sets are read only that far.
    set_bits(kWrite, {w});
    const int64_t limit = server->fds().limit();
    const uint64_t at_guard = kGuard - (static_cast<uint64_t>(limit) + 63) / 64 * 8;
    std::memcpy(at(at_guard), at(kWrite), 8);
    EXPECT_EQ(select(INT32_MAX, 0, at_guard, 0, 0), 1);
    EXPECT_EQ(select(limit + 64, 0, at_guard + 8, 0, 0), -EFAULT) << "its last word in the guard";
    EXPECT_EQ(select(64, kGuard - 4, 0, 0, 0), -EFAULT);
    EXPECT_EQ(select(64, 0, 0, 0, kGuard - 8), -EFAULT);
    EXPECT_EQ(select(64, 0, 0, kGuard, 0), -EFAULT);
    EXPECT_EQ(select(0x100000000 + 3, 0, 0, 0, kTime), select(3, 0, 0, 0, kTime)) << "nfds is an int";
    // pselect6's {sigset, size}: read and checked, as Linux does.
    const uint64_t pair_bad_size[2] = {kMask, 4};
    std::memcpy(at(kMaskPair), pair_bad_size, sizeof pair_bad_size);
    set_bits(kWrite, {w});
    EXPECT_EQ(ret(SYS_pselect6, w + 1, 0, kWrite, 0, 0, kMaskPair), -EINVAL);
    const uint64_t pair_bad_mask[2] = {kGuard, 8};
    std::memcpy(at(kMaskPair), pair_bad_mask, sizeof pair_bad_mask);
    EXPECT_EQ(ret(SYS_pselect6, w + 1, 0, kWrite, 0, 0, kMaskPair), -EFAULT);
    EXPECT_EQ(ret(SYS_pselect6, w + 1, 0, kWrite, 0, 0, kGuard - 8), -EFAULT);
    const uint64_t pair_ok[2] = {kMask, 8};
    std::memcpy(at(kMaskPair), pair_ok, sizeof pair_ok);
    EXPECT_EQ(ret(SYS_pselect6, w + 1, 0, kWrite, 0, 0, kMaskPair), 1);
    const uint64_t pair_none[2] = {0, 12345};
    std::memcpy(at(kMaskPair), pair_none, sizeof pair_none);
    EXPECT_EQ(ret(SYS_pselect6, w + 1, 0, kWrite, 0, 0, kMaskPair), 1) << "no mask: its size is not looked at";
}

TEST_F(Select, StopEndsAWait) {
    make(false);
    auto [r, w] = pipe();
    set_bits(kRead, {r});
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        server->request_stop();
    });
    EXPECT_EQ(select(r + 1, kRead, 0, 0, 0), -EINTR);
    stopper.join();
    (void)w;
}

} // namespace
} // namespace kvmgpu::linux_abi
