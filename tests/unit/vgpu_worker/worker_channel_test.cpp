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
#include "kvmtool-gpu/devices/vgpu_worker/shared_pieces.h"
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
        // The channel is kept from forks: the child it is for maps it again.
        const memmap::ForkShare mine[] = {ch->share()};
        if (!memmap::map_shares_again(mine)) _exit(2);
        // Echo: reply with ring_entries + 1, the ring gpa as registration_ns and the
        // input bytes reversed, twice.
        for (int i = 0; i < 2 && ch->wait_request(parent); ++i) {
            const WorkerRequest& q = ch->request();
            ch->reply() = WorkerReply{};
            ch->reply().status = q.ring_entries + 1;
            ch->reply().registration_ns = q.ring_gpa;
            ch->reply().out_bytes = q.in_bytes;
            std::reverse(ch->data(), ch->data() + q.in_bytes);
            ch->post_reply();
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

TEST(SharedPieces, SharedBackingIsOnePieceAndPrivateMemoryNone) {
    auto b = memmap::Backing::create(memmap::PageSize::k4K, 1 << 20);
    const auto p = shared_pieces(b->data() + 4096, 8192);
    ASSERT_TRUE(p.has_value());
    ASSERT_EQ(p->size(), 1u);
    EXPECT_EQ((*p)[0].start, reinterpret_cast<uint64_t>(b->data() + 4096));
    EXPECT_EQ((*p)[0].end, (*p)[0].start + 8192);
    EXPECT_EQ((*p)[0].offset, 4096u);
    EXPECT_NE((*p)[0].inode, 0u);

    std::vector<uint8_t> heap(1 << 20);
    EXPECT_FALSE(shared_pieces(heap.data(), heap.size()).has_value()) << "private heap memory";
    EXPECT_FALSE(shared_pieces(b->data(), 0).has_value());
    EXPECT_FALSE(shared_pieces(b->data(), (1 << 20) + 4096).has_value()) << "runs past the mapping";
}

TEST(SharedPieces, TwoMappingsOfOneObjectDifferFromTwoObjects) {
    auto a = memmap::Backing::create(memmap::PageSize::k4K, 1 << 16);
    auto b = memmap::Backing::create(memmap::PageSize::k4K, 1 << 16);
    const auto pa = shared_pieces(a->data(), 4096), pb = shared_pieces(b->data(), 4096);
    ASSERT_TRUE(pa && pb);
    EXPECT_NE((*pa)[0].inode, (*pb)[0].inode);
    // A VMA split by madvise stays one piece.
    ASSERT_EQ(madvise(a->data() + 16384, 4096, MADV_RANDOM), 0);
    const auto whole = shared_pieces(a->data(), 1 << 16);
    ASSERT_TRUE(whole.has_value());
    EXPECT_EQ(whole->size(), 1u);
}

} // namespace
} // namespace kvmgpu::vgpu::test
