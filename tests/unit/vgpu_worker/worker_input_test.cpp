// Requests the VMM would never send, written straight into a worker's
// channel: the worker refuses them and stays up. The channel carries no
// pointers any more, only a command copy its own dispatch validates (as it
// would inline) and Start's piece lists, which are bounds-checked.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "kvmtool-gpu/devices/vgpu_worker/gpu_worker.h"
#include "kvmtool-gpu/devices/vgpu_worker/shared_pieces.h"
#include "tests/support/worker_vgpu.h"

namespace kvmgpu::vgpu::test {
namespace {

using namespace std::chrono_literals;

class RawWorker : public ::testing::Test {
protected:
    void SetUp() override {
        mem_.add_region(memmap::GuestPhysAddr{0}, memmap::Backing::create(memmap::PageSize::k4K, 1 << 20));
        counters_ = static_cast<VgpuCounters*>(
            mmap(nullptr, sizeof(VgpuCounters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
        ASSERT_NE(counters_, MAP_FAILED);
        new (counters_) VgpuCounters;
        setup_ = WorkerSetup{&mem_, host_factory(), VgpuOptions{}, counters_, 1};
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
    VgpuCounters* counters_ = static_cast<VgpuCounters*>(MAP_FAILED);
    WorkerSetup setup_;
    std::unique_ptr<WorkerChannel> ch_;
    pid_t pid_ = -1;
};

TEST_F(RawWorker, GarbageStartIsRefused) {
    EXPECT_EQ(call(WorkerOp::Execute), VGPU_ERROR_NOT_INITIALIZED) << "a command before Start";
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

TEST_F(RawWorker, RandomCommandsGetStatusesNotCrashes) {
    ASSERT_EQ(call(WorkerOp::Start, good_pieces()), VGPU_SUCCESS);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 3000; ++i) {
        GuestCommand& c = ch_->request().cmd;
        c.desc.opcode = static_cast<uint16_t>(rng() % (VGPU_OP_MAX_ + 4));
        c.desc.flags = static_cast<uint16_t>(rng() % 3 == 0 ? rng() : rng() % 2);
        c.desc.payload_len = static_cast<uint32_t>(rng() % 600);
        c.desc.seq = i;
        for (uint64_t& a : c.desc.arg) a = rng() % 4 == 0 ? rng() : rng() % (2 << 20);
        for (auto& b : c.payload) b = static_cast<uint8_t>(rng());
        ASSERT_NE(call(WorkerOp::Execute), ~0u) << "the worker died on command " << i;
    }
    EXPECT_EQ(counters_->commands.load(), 3000u);
}

} // namespace
} // namespace kvmgpu::vgpu::test
