// Requests the VMM would never send, written straight into a worker's
// channel: the worker must refuse them, not follow them. (Garbage on this
// channel killed the worker seven times, always in the device-walk request
// with a bogus list pointer; no guest can write this channel, so this is
// defence in depth.)
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_worker.h"
#include "kvmtool-gpu/devices/vgpu/backends/host_backend.h"

namespace kvmgpu::vgpu {
namespace {

using namespace std::chrono_literals;

class RawWorker : public ::testing::Test {
protected:
    void SetUp() override {
        ch_ = RpcChannel::create(1 << 20, 10);
        const pid_t parent = getpid();
        pid_ = fork();
        ASSERT_GE(pid_, 0);
        if (pid_ == 0)
            run_gpu_worker(*ch_, [](std::string*) { return std::make_unique<HostBackend>(); }, parent);
    }
    void TearDown() override {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    // One request; the worker's status, or ~0u if it did not answer (dead).
    uint32_t call(RpcOp op, std::initializer_list<uint64_t> args, uint64_t in_bytes = 0, uint32_t flags = 0) {
        RpcRequest& q = ch_->request();
        q = RpcRequest{};
        q.op = static_cast<uint32_t>(op);
        q.flags = flags;
        q.in_bytes = in_bytes;
        size_t i = 0;
        for (uint64_t a : args) q.arg[i++] = a;
        ch_->post_request();
        const auto w = ch_->wait_reply(std::chrono::steady_clock::now() + 20s, [&] { return alive(); });
        return w == RpcChannel::Wait::Done ? ch_->reply().status : ~0u;
    }
    bool alive() { return waitpid(pid_, nullptr, WNOHANG) == 0; }

    std::unique_ptr<RpcChannel> ch_;
    pid_t pid_ = -1;
};

TEST_F(RawWorker, PointersOutsideRegisteredGuestRamAreRefused) {
    uint64_t dptr = 0;
    ASSERT_EQ(call(RpcOp::MemAlloc, {1 << 16}), VGPU_SUCCESS);
    dptr = ch_->reply().out[0];
    // A pointer valid in the worker (its copy of this stack) but not guest RAM.
    uint8_t local[64] = {};
    const uint64_t here = reinterpret_cast<uint64_t>(local);
    for (uint64_t bogus : {uint64_t{0x10}, uint64_t{0xdeadbeef000}, here, ~uint64_t{0}}) {
        SCOPED_TRACE(bogus);
        // The device walk: list pointer, count, total, stream, async, no regions.
        EXPECT_EQ(call(RpcOp::MemcpySgWalk, {1, dptr, bogus, 4, 64, 0, 0, 0}), VGPU_ERROR_INVALID_VALUE);
        // A direct (unstaged) copy.
        EXPECT_EQ(call(RpcOp::MemcpyHtoD, {dptr, bogus, 64, 0, 0}), VGPU_ERROR_INVALID_VALUE);
        EXPECT_EQ(call(RpcOp::MemcpyDtoH, {bogus, dptr, 64, 0, 0}), VGPU_ERROR_INVALID_VALUE);
        // Scatter-gather runs naming it.
        const memmap::HostRun run{reinterpret_cast<uint8_t*>(bogus), {0}, 64};
        std::memcpy(ch_->data(), &run, sizeof run);
        EXPECT_EQ(call(RpcOp::MemcpyHtoDSg, {dptr, 1, 0, 0, 0}, sizeof run), VGPU_ERROR_INVALID_VALUE);
    }
    // A walk whose window list names memory that is not registered guest RAM.
    const RamRegion window{0, sizeof local, local};
    std::memcpy(ch_->data(), &window, sizeof window);
    EXPECT_EQ(call(RpcOp::MemcpySgWalk, {1, dptr, here, 1, 16, 0, 0, 1}, sizeof window), VGPU_ERROR_INVALID_VALUE);
    EXPECT_TRUE(alive());
    // Staged copies (through the channel's data area) still work.
    EXPECT_EQ(call(RpcOp::MemcpyHtoD, {dptr, 0, 64, 0, 0}, 64, kRpcStaged), VGPU_SUCCESS);
}

// Random requests of every kind but Quit and InjectFault: each gets an
// answer, and the worker is alive at the end.
TEST_F(RawWorker, RandomRequestsNeverKillIt) {
    std::mt19937_64 rng(11);
    const uint32_t last_op = static_cast<uint32_t>(RpcOp::MemcpySgWalk);
    int answered = 0;
    for (int i = 0; i < 3000; ++i) {
        uint32_t op = 1 + static_cast<uint32_t>(rng() % (last_op + 2)); // a few past the last, too
        if (op == static_cast<uint32_t>(RpcOp::Quit) || op == static_cast<uint32_t>(RpcOp::InjectFault)) continue;
        for (uint64_t j = 0; j < 256; ++j) ch_->data()[j] = static_cast<uint8_t>(rng());
        const auto pick = [&] {
            switch (rng() % 4) {
            case 0: return rng() % 64;
            case 1: return rng() % (1u << 20);
            case 2: return uint64_t{1} << (rng() % 64);
            default: return rng();
            }
        };
        RpcRequest& q = ch_->request();
        q = RpcRequest{};
        q.op = op;
        q.flags = static_cast<uint32_t>(rng() % 3);
        for (auto& a : q.arg) a = pick();
        q.in_bytes = rng() % 300;
        ch_->post_request();
        const auto w = ch_->wait_reply(std::chrono::steady_clock::now() + 20s, [&] { return alive(); });
        ASSERT_EQ(w, RpcChannel::Wait::Done) << "request " << i << " op " << op << " killed or hung the worker";
        ++answered;
    }
    EXPECT_GT(answered, 2000);
    EXPECT_TRUE(alive());
}

} // namespace
} // namespace kvmgpu::vgpu
