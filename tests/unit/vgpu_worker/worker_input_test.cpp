// Requests the VMM would never send, written straight into a worker's
// channel, and random commands in the ring it consumes: the worker refuses
// them and stays up. The channel carries no pointers and no commands, only
// Start's piece lists (bounds-checked) and the ring ENABLE accepted.
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
#include "kvmtool-gpu/devices/vgpu_worker/shared_pieces.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

using namespace std::chrono_literals;

class RawWorker : public ::testing::Test {
protected:
    void SetUp() override {
        mem_.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 4 << 20));
        counters_ = static_cast<VgpuCounters*>(
            mmap(nullptr, sizeof(VgpuCounters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
        ASSERT_NE(counters_, MAP_FAILED);
        new (counters_) VgpuCounters;
        setup_ = WorkerSetup{&mem_, host_factory(), VgpuOptions{}, counters_, 1, kick_.fd()};
        ch_ = WorkerChannel::create(64 << 10, 10);
        const pid_t parent = getpid();
        pid_ = fork();
        ASSERT_GE(pid_, 0);
        if (pid_ == 0) run_gpu_worker(*ch_, setup_, parent);
    }
    void TearDown() override {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        if (counters_ != MAP_FAILED) munmap(counters_, sizeof(VgpuCounters));
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
    uint64_t good_pieces() {
        const auto list = shared_pieces(mem_.regions()[0].backing->data(), mem_.regions()[0].size());
        const uint64_t n = list->size();
        std::memcpy(ch_->data(), &n, sizeof n);
        std::memcpy(ch_->data() + sizeof n, list->data(), n * sizeof(SharedPiece));
        return sizeof n + n * sizeof(SharedPiece);
    }

    memmap::GuestMemory mem_;
    KickEventfd kick_;
    VgpuCounters* counters_ = static_cast<VgpuCounters*>(MAP_FAILED);
    WorkerSetup setup_;
    std::unique_ptr<WorkerChannel> ch_;
    pid_t pid_ = -1;
};

TEST_F(RawWorker, GarbageStartIsRefused) {
    EXPECT_EQ(call(WorkerOp::Attach), VGPU_ERROR_NOT_INITIALIZED) << "a ring before Start";
    EXPECT_EQ(call(WorkerOp::Start, 0), VGPU_ERROR_NO_DEVICE) << "no piece list";
    uint64_t n = ~0ull;
    std::memcpy(ch_->data(), &n, sizeof n);
    EXPECT_EQ(call(WorkerOp::Start, 64 << 10), VGPU_ERROR_NO_DEVICE) << "a count past the data";
    EXPECT_EQ(call(WorkerOp::Start, ~0ull), VGPU_ERROR_NO_DEVICE) << "in_bytes past the area";
    good_pieces();
    n = 1;
    std::memcpy(ch_->data(), &n, sizeof n);
    std::memset(ch_->data() + sizeof n, 0x5A, sizeof(SharedPiece));
    EXPECT_EQ(call(WorkerOp::Start, sizeof n + sizeof(SharedPiece)), VGPU_ERROR_NO_DEVICE) << "other pages";
    EXPECT_EQ(call(static_cast<WorkerOp>(77)), VGPU_ERROR_NOT_INITIALIZED);
    ASSERT_TRUE(alive());
    EXPECT_EQ(call(WorkerOp::Start, good_pieces()), VGPU_SUCCESS);
    EXPECT_EQ(call(WorkerOp::Start, good_pieces()), VGPU_ERROR_INVALID_VALUE) << "Start twice";
}

// The ring lies above the 2 MiB the random arguments aim at.
TEST_F(RawWorker, RandomCommandsGetStatusesNotCrashes) {
    constexpr uint64_t kRing = 3 << 20;
    constexpr uint32_t kEntries = 16;
    ASSERT_EQ(call(WorkerOp::Start, good_pieces()), VGPU_SUCCESS);
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
