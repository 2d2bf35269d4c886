// The channel's bounded waits and the shared-mapping check, without a worker.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "kvmtool-gpu/devices/vgpu_worker/worker_channel.h"
#include "memmap/backing.h"

namespace kvmgpu::vgpu::test {
namespace {

using namespace std::chrono_literals;

TEST(WorkerChannel, UnansweredRequestTimesOutAtItsDeadline) {
    auto ch = WorkerChannel::create(4096, 10);
    ch->request().op = 1;
    ch->post_request();
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(ch->wait_reply(t0 + 50ms, [] { return true; }), WorkerChannel::Wait::TimedOut);
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_GE(took, 50ms);
}

TEST(WorkerChannel, DeadPeerEndsTheWaitBeforeTheDeadline) {
    auto ch = WorkerChannel::create(4096, 10);
    ch->post_request();
    const auto t0 = std::chrono::steady_clock::now();
    // A wait that ran to its deadline would say Timeout.
    EXPECT_EQ(ch->wait_reply(t0 + 30s, [] { return false; }), WorkerChannel::Wait::PeerGone);
}

TEST(WorkerChannel, RequestAndReplyCrossAFork) {
    auto ch = WorkerChannel::create(1 << 20, 20);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The channel is kept from forks: the child it is for maps it from
        // its descriptor, at an address of its own.
        std::unique_ptr<WorkerChannel> mine;
        try {
            mine = WorkerChannel::adopt(dup(ch->share().fd), 1 << 20, 20);
        } catch (...) {
            _exit(2);
        }
        // Echo: reply with ring_entries + 1, the ring gpa as registration_ns and the
        // input bytes reversed, twice.
        for (int i = 0; i < 2 && mine->wait_request(parent); ++i) {
            const WorkerRequest& q = mine->request();
            mine->reply() = WorkerReply{};
            mine->reply().status = q.ring_entries + 1;
            mine->reply().registration_ns = q.ring_gpa;
            mine->reply().out_bytes = q.in_bytes;
            std::reverse(mine->data(), mine->data() + q.in_bytes);
            mine->post_reply();
        }
        _exit(0);
    }
    for (uint64_t round = 0; round < 2; ++round) {
        ch->request().ring_entries = static_cast<uint32_t>(41 + round);
        ch->request().in_bytes = 3;
        ch->request().ring_gpa = 1000 + round;
        std::memcpy(ch->data(), "abc", 3);
        ch->post_request();
        ASSERT_EQ(ch->wait_reply(std::chrono::steady_clock::now() + 10s, [] { return true; }), WorkerChannel::Wait::Done);
        EXPECT_EQ(ch->reply().status, 42 + round);
        EXPECT_EQ(ch->reply().registration_ns, 1000 + round);
        EXPECT_EQ(std::string(reinterpret_cast<char*>(ch->data()), 3), "cba");
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

} // namespace
} // namespace kvmgpu::vgpu::test
