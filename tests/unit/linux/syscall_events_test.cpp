// Pipes, eventfds, poll and epoll as the server serves them: data through
// a pipe, EOF and EPIPE, a blocking read woken by another thread's write,
// a VM stop ending any wait, time-outs honoured, every guest array checked
// over its whole length, and the limits (descriptors, epoll sets, entries).
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "kvmtool-gpu/vmm/linux/epoll_set.h"
#include "tests/unit/linux/server_fixture.h"

namespace kvmgpu::linux_abi {
namespace {

using namespace server_fixture;

struct Events : Server {
    int32_t fd_at(uint64_t gpa) {
        int32_t v;
        std::memcpy(&v, at(gpa), 4);
        return v;
    }
    // A pipe: {read end, write end}.
    std::pair<int32_t, int32_t> pipe(uint64_t flags = 0) {
        EXPECT_EQ(ret(SYS_pipe2, kBuf, flags), 0);
        return {fd_at(kBuf), fd_at(kBuf + 4)};
    }
    int64_t write_text(int64_t fd, const std::string& s) {
        put(kBuf + 512, s);
        return ret(SYS_write, fd, kBuf + 512, s.size());
    }
    std::string read_text(int64_t fd, uint64_t n) {
        const int64_t got = ret(SYS_read, fd, kBuf + 1024, n);
        if (got < 0) return "errno " + std::to_string(-got);
        return std::string(reinterpret_cast<char*>(at(kBuf + 1024)), static_cast<size_t>(got));
    }
    void put_pollfd(uint64_t gpa, int fd, short events) {
        const pollfd p{fd, events, 0};
        std::memcpy(at(gpa), &p, sizeof p);
    }
    short revents(uint64_t gpa) { return reinterpret_cast<pollfd*>(at(gpa))->revents; }
    void put_event(uint64_t gpa, uint32_t events, uint64_t data) {
        std::memcpy(at(gpa), &events, 4);
        std::memcpy(at(gpa + 4), &data, 8);
    }
};

TEST_F(Events, PipeCarriesBytesThenEndOfFileAndEpipe) {
    make(false);
    auto [r, w] = pipe();
    ASSERT_GE(r, 3);
    ASSERT_GE(w, 3);
    EXPECT_EQ(write_text(w, "hello"), 5);
    EXPECT_EQ(read_text(r, 100), "hello");
    EXPECT_EQ(read_text(w, 1), "errno " + std::to_string(EBADF)); // the write end is not readable
    EXPECT_EQ(write_text(r, "x"), -EBADF);
    EXPECT_EQ(ret(SYS_lseek, r, 0, SEEK_SET), -ESPIPE);
    EXPECT_EQ(ret(SYS_mmap, 0, 4096, 1, 2, r, 0), -ENODEV);
    ASSERT_EQ(ret(SYS_close, w), 0);
    EXPECT_EQ(read_text(r, 10), ""); // writer gone: end of file
    auto [r2, w2] = pipe();
    ASSERT_EQ(ret(SYS_close, r2), 0);
    EXPECT_EQ(write_text(w2, "x"), -EPIPE); // reader gone: EPIPE, and the VMM lives on
    EXPECT_EQ(ret(SYS_fcntl, r, F_GETFL), O_RDONLY);
}

TEST_F(Events, PipeFlagsAndPointersChecked) {
    make(false);
    EXPECT_EQ(ret(SYS_pipe2, kBuf, 0x40 /* O_CREAT */), -EINVAL);
    EXPECT_EQ(ret(SYS_pipe2, 0, 0), -EFAULT);
    EXPECT_EQ(ret(SYS_pipe2, kGuard - 4, 0), -EFAULT); // the second int is in the guard
    EXPECT_EQ(server->fds().open_count(), 3) << "no descriptor left behind by a failed pipe2";
    auto [r, w] = pipe(O_NONBLOCK);
    EXPECT_EQ(read_text(r, 1), "errno " + std::to_string(EAGAIN)); // O_NONBLOCK: no wait
    EXPECT_EQ(ret(SYS_fcntl, r, F_GETFL), O_RDONLY | O_NONBLOCK);
    EXPECT_EQ(ret(SYS_pipe, kBuf + 8), 0); // the old call
    put(kBuf + 2048, "/proc/self/fd/" + std::to_string(r));
    const int64_t n = ret(SYS_readlink, kBuf + 2048, kBuf + 3072, 64);
    ASSERT_GT(n, 0);
    EXPECT_TRUE(std::string(reinterpret_cast<char*>(at(kBuf + 3072)), n).starts_with("pipe:["));
    (void)w;
}

TEST_F(Events, PipesCountAgainstTheDescriptorLimit) {
    options.max_fds = 8;
    make(false);
    for (int i = 0; i < 2; ++i) pipe(); // 3 + 4 descriptors
    EXPECT_EQ(ret(SYS_pipe2, kBuf, 0), -EMFILE); // one slot left: a pipe needs two
    EXPECT_EQ(server->fds().open_count(), 7);
    EXPECT_EQ(ret(SYS_eventfd2, 0, 0), 7);
    EXPECT_EQ(ret(SYS_eventfd2, 0, 0), -EMFILE);
}

TEST_F(Events, BlockingReadWaitsForAnotherThreadsWrite) {
    make(false);
    auto [r, w] = pipe();
    std::atomic<bool> wrote{false};
    std::thread writer([&, w = w] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        wrote = true;
        SyscallCall c;
        c.nr = SYS_write;
        c.arg[0] = static_cast<uint64_t>(w);
        c.arg[1] = kBuf + 512;
        c.arg[2] = 3;
        CpuState cpu2;
        server->serve(c, cpu2);
    });
    put(kBuf + 512, "abc");
    EXPECT_EQ(read_text(r, 10), "abc");
    EXPECT_TRUE(wrote);
    writer.join();
}

TEST_F(Events, StopEndsABlockedReadAndPoll) {
    make(false);
    auto [r, w] = pipe();
    const int64_t ep = ret(SYS_epoll_create1, 0);
    put_event(kBuf + 4096, EPOLLIN, 0);
    ASSERT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, r, kBuf + 4096), 0);
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        server->request_stop();
    });
    EXPECT_EQ(read_text(r, 1), "errno " + std::to_string(EINTR));
    stopper.join();
    // Once stopping: one look, no wait, then EINTR (what is ready is still told).
    put_pollfd(kBuf + 4096, r, POLLIN);
    EXPECT_EQ(ret(SYS_poll, kBuf + 4096, 1, static_cast<uint64_t>(-1)), -EINTR);
    EXPECT_EQ(ret(SYS_epoll_wait, ep, kBuf + 8192, 1, static_cast<uint64_t>(-1)), -EINTR);
    put_pollfd(kBuf + 4096, w, POLLOUT);
    EXPECT_EQ(ret(SYS_poll, kBuf + 4096, 1, static_cast<uint64_t>(-1)), 1);
    EXPECT_EQ(ret(SYS_poll, kGuard - 4, 1, static_cast<uint64_t>(-1)), -EFAULT) << "arguments still checked";
}

TEST_F(Events, FionbioSetsAPipesNonBlockingModeAsFsetflDoes) {
    make(false);
    auto [r, w] = pipe();
    const int32_t on = 1, off = 0;
    std::memcpy(at(kBuf + 300), &on, 4);
    EXPECT_EQ(ret(SYS_ioctl, r, FIONBIO, kBuf + 300), 0);
    EXPECT_EQ(read_text(r, 1), "errno " + std::to_string(EAGAIN)) << "empty and non-blocking: at once";
    EXPECT_EQ(ret(SYS_fcntl, r, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
    std::memcpy(at(kBuf + 300), &off, 4);
    EXPECT_EQ(ret(SYS_ioctl, r, FIONBIO, kBuf + 300), 0);
    EXPECT_EQ(ret(SYS_fcntl, r, F_GETFL) & O_NONBLOCK, 0);
    EXPECT_EQ(ret(SYS_ioctl, r, FIONBIO, kGuard), -EFAULT);
    EXPECT_EQ(ret(SYS_ioctl, r, FIOCLEX), 0);
    EXPECT_EQ(ret(SYS_ioctl, 1, TCGETS, kBuf + 300), -ENOTTY) << "no terminal";
    EXPECT_EQ(ret(SYS_ioctl, 99, FIONBIO, kBuf + 300), -EBADF);
    (void)w;
}

TEST_F(Events, EventfdCountsAndSemaphore) {
    make(false);
    const int64_t efd = ret(SYS_eventfd2, 5, EFD_NONBLOCK);
    ASSERT_GE(efd, 3);
    EXPECT_EQ(ret(SYS_read, efd, kBuf, 8), 8);
    uint64_t v;
    std::memcpy(&v, at(kBuf), 8);
    EXPECT_EQ(v, 5u);
    EXPECT_EQ(ret(SYS_read, efd, kBuf, 8), -EAGAIN);
    EXPECT_EQ(ret(SYS_read, efd, kBuf, 4), -EINVAL); // fewer than 8 bytes: the host's answer
    const int64_t sem = ret(SYS_eventfd2, 2, EFD_SEMAPHORE);
    EXPECT_EQ(ret(SYS_read, sem, kBuf, 8), 8);
    std::memcpy(&v, at(kBuf), 8);
    EXPECT_EQ(v, 1u);
    EXPECT_EQ(ret(SYS_eventfd2, 0, 0x1000), -EINVAL);
    EXPECT_EQ(ret(SYS_eventfd2, 1ull << 32, 0), -EINVAL);
    EXPECT_EQ(ret(SYS_eventfd, 0), sem + 1);
}

TEST_F(Events, PollReportsConsolePipesAndBadDescriptors) {
    make(false);
    auto [r, w] = pipe();
    put_pollfd(kBuf + 4096, r, POLLIN);
    put_pollfd(kBuf + 4104, w, POLLOUT);
    put_pollfd(kBuf + 4112, 0, POLLIN);
    put_pollfd(kBuf + 4120, 1, POLLOUT);
    put_pollfd(kBuf + 4128, 200, POLLIN); // not open
    put_pollfd(kBuf + 4136, -1, POLLIN);  // ignored
    EXPECT_EQ(ret(SYS_poll, kBuf + 4096, 6, 0), 4);
    EXPECT_EQ(revents(kBuf + 4096), 0);
    EXPECT_EQ(revents(kBuf + 4104), POLLOUT);
    EXPECT_EQ(revents(kBuf + 4112), POLLIN);
    EXPECT_EQ(revents(kBuf + 4120), POLLOUT);
    EXPECT_EQ(revents(kBuf + 4128), POLLNVAL);
    EXPECT_EQ(revents(kBuf + 4136), 0);
    write_text(w, "z");
    put_pollfd(kBuf + 4096, r, POLLIN);
    EXPECT_EQ(ret(SYS_poll, kBuf + 4096, 1, 1000), 1);
    EXPECT_EQ(revents(kBuf + 4096), POLLIN);
    // The whole array is the guest's, and never more than the descriptor limit.
    EXPECT_EQ(ret(SYS_poll, kGuard - 8, 2, 0), -EFAULT);
    EXPECT_EQ(ret(SYS_poll, kBuf, 100000, 0), -EINVAL);
}

TEST_F(Events, PollTimeoutsAreHonoured) {
    make(false);
    auto [r, w] = pipe();
    put_pollfd(kBuf + 4096, r, POLLIN);
    // Ordering, not wall-clock bounds: a timed poll on an empty pipe ends in 0.
    EXPECT_EQ(ret(SYS_poll, kBuf + 4096, 1, 30), 0);
    const timespec ts{0, 20'000'000};
    std::memcpy(at(kBuf + 6000), &ts, sizeof ts);
    EXPECT_EQ(ret(SYS_ppoll, kBuf + 4096, 1, kBuf + 6000, 0, 8), 0);
    const timespec bad{0, 1'000'000'000};
    std::memcpy(at(kBuf + 6000), &bad, sizeof bad);
    EXPECT_EQ(ret(SYS_ppoll, kBuf + 4096, 1, kBuf + 6000, 0, 8), -EINVAL);
    EXPECT_EQ(ret(SYS_ppoll, kBuf + 4096, 1, 0, kBuf + 6100, 4), -EINVAL); // sigset size
    EXPECT_EQ(ret(SYS_ppoll, kBuf + 4096, 1, 8, 0, 8), -EFAULT);
    EXPECT_EQ(ret(SYS_poll, 0, 0, 10), 0); // a sleep
    (void)w;
}

TEST_F(Events, EpollWatchesPipesAndConsole) {
    make(false);
    auto [r, w] = pipe();
    const int64_t ep = ret(SYS_epoll_create1, 0);
    ASSERT_GE(ep, 3);
    put_event(kBuf + 4096, EPOLLIN, 0x1111);
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, r, kBuf + 4096), 0);
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, r, kBuf + 4096), -EEXIST);
    EXPECT_EQ(ret(SYS_epoll_wait, ep, kBuf + 8192, 4, 10), 0); // nothing yet, after the time-out
    write_text(w, "q");
    EXPECT_EQ(ret(SYS_epoll_wait, ep, kBuf + 8192, 4, 1000), 1);
    uint32_t ev;
    uint64_t data;
    std::memcpy(&ev, at(kBuf + 8192), 4);
    std::memcpy(&data, at(kBuf + 8196), 8);
    EXPECT_EQ(ev, uint32_t{EPOLLIN});
    EXPECT_EQ(data, 0x1111u);
    // Level-triggered: still there until read.
    EXPECT_EQ(ret(SYS_epoll_pwait, ep, kBuf + 8192, 4, 0, 0, 8), 1);
    put_event(kBuf + 4096, EPOLLOUT, 0x2222);
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, 1, kBuf + 4096), 0);
    EXPECT_EQ(ret(SYS_epoll_wait, ep, kBuf + 8192, 4, 0), 2);
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_DEL, 1, 0), 0);
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_DEL, 1, 0), -ENOENT);
    // One-shot: reported once, then quiet until EPOLL_CTL_MOD.
    put_event(kBuf + 4096, EPOLLIN | EPOLLONESHOT, 0x3333);
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_MOD, r, kBuf + 4096), 0);
    EXPECT_EQ(ret(SYS_epoll_wait, ep, kBuf + 8192, 4, 0), 1);
    EXPECT_EQ(ret(SYS_epoll_wait, ep, kBuf + 8192, 4, 0), 0);
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_MOD, r, kBuf + 4096), 0);
    EXPECT_EQ(ret(SYS_epoll_wait, ep, kBuf + 8192, 4, 0), 1);
    // Closing the watched descriptor removes it.
    ASSERT_EQ(ret(SYS_close, r), 0);
    EXPECT_EQ(ret(SYS_epoll_wait, ep, kBuf + 8192, 4, 0), 0);
    // An epoll fd in poll: readable when its set has something ready.
    put_event(kBuf + 4096, EPOLLOUT, 1);
    ASSERT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, 2, kBuf + 4096), 0);
    put_pollfd(kBuf + 4096, static_cast<int>(ep), POLLIN);
    EXPECT_EQ(ret(SYS_poll, kBuf + 4096, 1, 0), 1);
}

TEST_F(Events, EpollRefusesWhatLinuxRefusesAndChecksPointers) {
    make(true);
    auto [r, w] = pipe();
    const int64_t ep = ret(SYS_epoll_create1, 0);
    put_event(kBuf + 4096, EPOLLIN, 0);
    put(kBuf + 2048, "/in.txt");
    const int64_t file = ret(SYS_openat, static_cast<uint64_t>(-100), kBuf + 2048, O_RDONLY);
    ASSERT_GE(file, 3);
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, file, kBuf + 4096), -EPERM); // a regular file
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, ep, kBuf + 4096), -EINVAL);  // itself
    EXPECT_EQ(ret(SYS_epoll_ctl, r, EPOLL_CTL_ADD, w, kBuf + 4096), -EINVAL);    // not an epoll fd
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, 9, r, kBuf + 4096), -EINVAL);
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, 200, kBuf + 4096), -EBADF);
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, r, kGuard - 4), -EFAULT); // the event's 12 bytes
    EXPECT_EQ(ret(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, r, kBuf + 4096), 0);
    EXPECT_EQ(ret(SYS_epoll_wait, ep, kBuf, 0, 0), -EINVAL);
    EXPECT_EQ(ret(SYS_epoll_wait, ep, kGuard - 12, 2, 0), -EFAULT); // the whole maxevents array
    EXPECT_EQ(ret(SYS_epoll_wait, r, kBuf, 1, 0), -EINVAL);
    EXPECT_EQ(ret(SYS_epoll_create1, 1), -EINVAL);
    EXPECT_EQ(ret(SYS_epoll_create, 0), -EINVAL);
    EXPECT_EQ(ret(SYS_read, ep, kBuf, 8), -EINVAL);
}

TEST_F(Events, EpollSetsPerVmAndEntriesPerSetAreBounded) {
    make(false);
    for (int i = 0; i < kMaxEpollSets; ++i) ASSERT_GE(ret(SYS_epoll_create1, 0), 3) << i;
    EXPECT_EQ(ret(SYS_epoll_create1, 0), -EMFILE);
    ASSERT_EQ(ret(SYS_close, 3), 0);
    EXPECT_EQ(ret(SYS_epoll_create1, 0), 3);
    // Entries: the set refuses past its limit (checked on the set itself:
    // the descriptor table alone stops a guest earlier).
    EpollSet set;
    auto file = std::make_shared<OpenFile>();
    for (size_t i = 0; i < kMaxEpollEntries; ++i) ASSERT_EQ(set.control(EPOLL_CTL_ADD, static_cast<int>(i), file, EPOLLIN, 0), 0);
    EXPECT_EQ(set.control(EPOLL_CTL_ADD, 100000, file, EPOLLIN, 0), -ENOSPC);
    EXPECT_EQ(set.size(), kMaxEpollEntries);
}

} // namespace
} // namespace kvmgpu::linux_abi
