// Requests the VMM would never send, written straight into a worker's
// channel, and random commands in the ring it consumes: the worker refuses
// them and stays up. The channel carries no pointers and no commands, only
// the requests and the ring ENABLE accepted. And recipes a worker cannot
// use end it with one line, not a crash.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <atomic>
#include <random>
#include <thread>

#include "kvmtool-gpu/devices/vgpu_worker/gpu_worker.h"
#include "kvmtool-gpu/devices/vgpu_worker/worker_zygote.h"
#include "memmap/fork_sharing.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

using namespace std::chrono_literals;

class RawWorker : public ::testing::Test {
protected:
    void SetUp() override {
        mem_.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 4 << 20));
        counters_share_ = memmap::create_unforked_shared("kvmgpu-vgpu-counters", sizeof(VgpuCounters));
        counters_ = new (counters_share_.addr) VgpuCounters;
        ch_ = WorkerChannel::create(64 << 10, 10);
        const WorkerRecipe recipe{.make = host_factory(),
                                  .handle_seed = 1,
                                  .spin_us = 10,
                                  .mem = &mem_,
                                  .channel = ch_.get(),
                                  .counters = counters_share_,
                                  .kick_fd = kick_.fd()};
        std::string why;
        pid_ = spawn_gpu_worker(recipe, &why);
        ASSERT_GT(pid_, 0) << why;
    }
    void TearDown() override {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        if (counters_) memmap::destroy_unforked_shared(counters_share_);
    }
    // One request; the worker's status, or ~0u if it did not answer (dead).
    uint32_t call(WorkerOp op, uint64_t in_bytes = 0) {
        ch_->request().op = static_cast<uint32_t>(op);
        ch_->request().in_bytes = in_bytes;
        ch_->post_request();
        const auto w = ch_->wait_reply(std::chrono::steady_clock::now() + 20s, [&] { return alive(); });
        return w == WorkerChannel::Wait::Done ? ch_->reply().status : ~0u;
    }
    bool alive() { return waitpid(pid_, nullptr, WNOHANG) == 0; }

    memmap::GuestMemory mem_;
    KickEventfd kick_;
    memmap::ForkShare counters_share_{};
    VgpuCounters* counters_ = nullptr;
    std::unique_ptr<WorkerChannel> ch_;
    pid_t pid_ = -1;
};

TEST_F(RawWorker, RequestsOutOfOrderAreRefused) {
    EXPECT_EQ(call(WorkerOp::Attach), VGPU_ERROR_NOT_INITIALIZED) << "a ring before Start";
    EXPECT_EQ(call(WorkerOp::Reset), VGPU_ERROR_NOT_INITIALIZED) << "a reset before Start";
    EXPECT_EQ(call(static_cast<WorkerOp>(77)), VGPU_ERROR_NOT_INITIALIZED);
    ASSERT_TRUE(alive());
    EXPECT_EQ(call(WorkerOp::Start, ~0ull), VGPU_SUCCESS) << "Start reads no input";
    EXPECT_EQ(call(WorkerOp::Start), VGPU_ERROR_INVALID_VALUE) << "Start twice";
    EXPECT_EQ(call(static_cast<WorkerOp>(77)), VGPU_ERROR_NOT_SUPPORTED);
    EXPECT_TRUE(alive());
}

// What run_worker_from_recipe makes of a recipe, in a child: its exit status.
int worker_exit_status(std::vector<uint8_t> bytes, std::vector<int> fds) {
    const pid_t pid = fork();
    if (pid == 0) run_worker_from_recipe(bytes, fds, getppid());
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST(WorkerRecipe, RecipesAWorkerCannotUseEndItWithStatus1) {
    memmap::GuestMemory mem;
    mem.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
    const memmap::ForkShare counters = memmap::create_unforked_shared("kvmgpu-vgpu-counters", sizeof(VgpuCounters));
    auto ch = WorkerChannel::create(4096, 10);
    KickEventfd kick;
    const WorkerRecipe recipe{.make = host_factory(), .mem = &mem, .channel = ch.get(), .counters = counters, .kick_fd = kick.fd()};
    std::vector<int> fds;
    const std::vector<uint8_t> good = encode_recipe(recipe, &fds);
    ASSERT_EQ(fds.size(), 4u) << "kick, channel, counters, one region";
    for (size_t cut : {size_t{0}, size_t{3}, good.size() / 2, good.size() - 1})
        EXPECT_EQ(worker_exit_status({good.begin(), good.begin() + static_cast<long>(cut)}, fds), 1) << cut;
    std::vector<uint8_t> longer = good;
    longer.push_back(0);
    EXPECT_EQ(worker_exit_status(longer, fds), 1) << "bytes past the end";
    EXPECT_EQ(worker_exit_status(good, {fds.begin(), fds.end() - 1}), 1) << "a region without its descriptor";
    std::vector<int> swapped = fds;
    std::swap(swapped[1], swapped[3]); // the channel's descriptor where guest RAM's should be
    EXPECT_EQ(worker_exit_status(good, swapped), 1) << "descriptors of the wrong sizes";
    WorkerRecipe bad = recipe;
    bad.channel = nullptr;
    EXPECT_THROW(encode_recipe(bad, &fds), std::invalid_argument);
    memmap::destroy_unforked_shared(counters);
}

// The ring lies above the 2 MiB the random arguments aim at.
TEST_F(RawWorker, RandomCommandsGetStatusesNotCrashes) {
    constexpr uint64_t kRing = 3 << 20;
    constexpr uint32_t kEntries = 16;
    ASSERT_EQ(call(WorkerOp::Start), VGPU_SUCCESS);
    uint8_t* ring = mem_.translate(memmap::GuestPhysAddr{kRing}, vgpu_ring_bytes(kEntries))->data();
    std::memset(ring, 0, vgpu_ring_bytes(kEntries));
    ch_->request().ring_gpa = kRing, ch_->request().ring_entries = kEntries, ch_->request().ring_consumer = 0;
    ASSERT_EQ(call(WorkerOp::Attach), VGPU_SUCCESS);
    auto word = [&](size_t off) { return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(ring + off)); };
    std::mt19937_64 rng(7);
    for (uint32_t i = 0; i < 3000; ++i) {
        const uint32_t slot = i % kEntries;
        vgpu_command c{};
        c.opcode = static_cast<uint16_t>(rng() % (VGPU_OP_MAX_ + 4));
        c.flags = static_cast<uint16_t>(rng() % 3 == 0 ? rng() : rng() % 2);
        c.payload_len = static_cast<uint32_t>(rng() % 600);
        c.seq = i + 1;
        for (uint64_t& a : c.arg) a = rng() % 4 == 0 ? rng() : rng() % (2 << 20);
        std::memcpy(ring + vgpu_command_offset(slot), &c, sizeof c);
        for (uint32_t b = 0; b < VGPU_PAYLOAD_BYTES; ++b)
            ring[vgpu_payload_offset(kEntries, slot) + b] = static_cast<uint8_t>(rng());
        word(offsetof(vgpu_ring_header, producer)).store(i + 1, std::memory_order_release);
        kick_.kick();
        const auto until = std::chrono::steady_clock::now() + 20s;
        while (word(offsetof(vgpu_ring_header, consumer)).load(std::memory_order_acquire) != i + 1) {
            ASSERT_TRUE(alive()) << "the worker died on command " << i;
            ASSERT_LT(std::chrono::steady_clock::now(), until) << "command " << i << " never completed";
            std::this_thread::yield();
        }
    }
    EXPECT_EQ(counters_->commands.load(), 3000u);
}

} // namespace
} // namespace kvmgpu::vgpu::test
