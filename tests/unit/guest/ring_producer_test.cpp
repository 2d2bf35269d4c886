// guest::RingProducer against a fake device thread on the host: sync
// waits, held async errors, a full ring wrapping, deferred doorbells and
// timeouts.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "guest-stub/cuda/ring_producer.h"

namespace {
using guest::RingProducer;

// Consumes commands in order like the VMM: status = arg[0], result = arg[1]+1.
// Given the doorbell, it sleeps whenever the ring is empty as the VMM's
// consumer does (event index at its consumer, full barrier, one more look),
// and only a kick (a new doorbell value) wakes it: a kick the guest
// wrongly suppressed leaves it asleep and the guest's wait times out.
// Without one it polls and never moves its event index.
class FakeDevice {
public:
    FakeDevice(uint8_t* mem, uint32_t entries, const volatile uint32_t* doorbell = nullptr)
        : mem_(mem), entries_(entries), doorbell_(doorbell) {}
    ~FakeDevice() { stop(); }
    void start()
    {
        thread_ = std::thread([this] { run(); });
    }
    void stop()
    {
        stop_ = true;
        if (thread_.joinable())
            thread_.join();
    }
    uint64_t processed() const { return processed_; }

private:
    void run()
    {
        auto* hdr = reinterpret_cast<vgpu_ring_header*>(mem_);
        auto load_producer = [&] {
            return std::atomic_ref<uint32_t>(const_cast<uint32_t&>(hdr->producer)).load(std::memory_order_acquire);
        };
        uint32_t consumer = 0;
        while (!stop_) {
            uint32_t producer = load_producer();
            if (producer == consumer && doorbell_ != nullptr) {
                const uint32_t bell = *doorbell_;
                std::atomic_ref<uint32_t>(const_cast<uint32_t&>(hdr->kick_event)).store(consumer);
                std::atomic_thread_fence(std::memory_order_seq_cst);
                if (load_producer() == consumer) {
                    while (*doorbell_ == bell && !stop_)
                        std::this_thread::yield();
                }
                continue;
            }
            while (consumer != producer) {
                uint32_t slot = consumer & (entries_ - 1);
                vgpu_command cmd;
                std::memcpy(&cmd, mem_ + vgpu_command_offset(slot), sizeof cmd);
                auto* comp = reinterpret_cast<vgpu_completion*>(
                    mem_ + vgpu_completion_offset(entries_, slot));
                comp->status = static_cast<uint32_t>(cmd.arg[0]);
                comp->result[0] = cmd.arg[1] + 1;
                std::atomic_ref<uint64_t>(const_cast<uint64_t&>(comp->seq))
                    .store(cmd.seq, std::memory_order_release);
                ++consumer;
                std::atomic_ref<uint32_t>(const_cast<uint32_t&>(hdr->consumer))
                    .store(consumer, std::memory_order_release);
                ++processed_;
            }
        }
    }
    uint8_t* mem_;
    uint32_t entries_;
    const volatile uint32_t* doorbell_;
    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> processed_{0};
    std::thread thread_;
};

class GuestRing : public ::testing::Test {
protected:
    static constexpr uint32_t kEntries = 8;
    void SetUp() override
    {
        bytes_ = (vgpu_ring_bytes(kEntries) + 4095) & ~uint64_t{4095};
        mem_ = static_cast<uint8_t*>(std::aligned_alloc(4096, bytes_));
        std::memset(mem_, 0, bytes_);
        RingProducer::Config c;
        c.mem = mem_;
        c.entries = kEntries;
        c.doorbell = &doorbell_;
        c.timeout_ticks = 20'000'000'000ull; // far more than any test needs
        ASSERT_TRUE(ring_.init(c));
    }
    void TearDown() override
    {
        device_.reset(); // joins its thread before the ring memory goes
        std::free(mem_);
    }
    void start_device()
    {
        device_ = std::make_unique<FakeDevice>(mem_, kEntries, &doorbell_);
        device_->start();
    }
    // A ring over the same memory that gives up after 1000 TSC ticks.
    RingProducer::Config short_timeout_config(volatile uint32_t* doorbell)
    {
        RingProducer::Config c;
        c.mem = mem_;
        c.entries = kEntries;
        c.doorbell = doorbell;
        c.timeout_ticks = 1000;
        return c;
    }
    // Submits one command with status/argument; returns its slot.
    RingProducer::Slot put(uint32_t status, uint64_t value, bool async)
    {
        RingProducer::Slot s;
        EXPECT_EQ(ring_.reserve(&s), 0u);
        s.cmd->opcode = VGPU_OP_NOP;
        s.cmd->flags = async ? VGPU_CMD_FLAG_ASYNC : 0;
        s.cmd->arg[0] = status;
        s.cmd->arg[1] = value;
        ring_.submit(s);
        return s;
    }
    uint64_t bytes_ = 0;
    uint8_t* mem_ = nullptr;
    volatile uint32_t doorbell_ = 0;
    RingProducer ring_;
    std::unique_ptr<FakeDevice> device_;
};

TEST_F(GuestRing, RejectsBadConfig)
{
    RingProducer r;
    RingProducer::Config c;
    c.mem = mem_;
    c.entries = 12; // not a power of two
    c.timeout_ticks = 1;
    EXPECT_FALSE(r.init(c));
    c.entries = 4; // below VGPU_MIN_RING
    EXPECT_FALSE(r.init(c));
    c.entries = 8;
    c.mem = mem_ + 64; // misaligned
    EXPECT_FALSE(r.init(c));
}

TEST_F(GuestRing, SyncCallsSeeTheirResults)
{
    start_device();
    for (uint64_t i = 0; i < 3 * kEntries; ++i) {
        RingProducer::Slot s = put(0, 100 + i, false);
        vgpu_completion done;
        ASSERT_EQ(ring_.wait(s, &done), 0u);
        EXPECT_EQ(done.seq, s.seq);
        EXPECT_EQ(done.status, 0u);
        EXPECT_EQ(done.result[0], 101 + i);
    }
    EXPECT_EQ(ring_.stats().commands, 3u * kEntries);
    // A kick for each command the sleeping device asked for, none for the
    // ones it found awake; every flush decided once.
    EXPECT_GE(ring_.stats().doorbells, 1u);
    EXPECT_EQ(ring_.stats().doorbells + ring_.stats().kicks_suppressed, 3u * kEntries);
    EXPECT_LE(doorbell_, 3u * kEntries); // the kick carries the producer
}

// A device that polls never asks again after the first command.
TEST_F(GuestRing, PollingDeviceGetsOneKick)
{
    device_ = std::make_unique<FakeDevice>(mem_, kEntries);
    device_->start();
    for (uint64_t i = 0; i < 3 * kEntries; ++i) {
        RingProducer::Slot s = put(0, i, false);
        ASSERT_EQ(ring_.wait(s, nullptr), 0u);
    }
    EXPECT_EQ(ring_.stats().doorbells, 1u); // the event index starts at 0: the first command kicks
    EXPECT_EQ(ring_.stats().kicks_suppressed, 3u * kEntries - 1);
}

TEST_F(GuestRing, AsyncErrorsAreHeldUntilTaken)
{
    start_device();
    put(0, 0, true);
    put(719, 0, true); // first error: held
    put(2, 0, true);   // second: not reported
    RingProducer::Slot s = put(0, 0, false);
    ASSERT_EQ(ring_.wait(s, nullptr), 0u);
    EXPECT_EQ(ring_.take_async_error(), 719u);
    EXPECT_EQ(ring_.take_async_error(), 0u); // cleared
    // A failing SYNC command is its caller's business, not held.
    RingProducer::Slot f = put(1, 0, false);
    vgpu_completion done;
    ASSERT_EQ(ring_.wait(f, &done), 0u);
    EXPECT_EQ(done.status, 1u);
    EXPECT_EQ(ring_.take_async_error(), 0u);
}

TEST_F(GuestRing, FullRingWaitsAndWraps)
{
    start_device();
    const uint32_t n = 1000;
    for (uint32_t i = 0; i < n; ++i)
        put(i == 777 ? 400 : 0, i, true);
    ASSERT_EQ(ring_.drain(), 0u);
    EXPECT_EQ(device_->processed(), n);
    EXPECT_EQ(ring_.consumer(), n);
    EXPECT_EQ(ring_.take_async_error(), 400u); // harvested across wraps
}

TEST_F(GuestRing, DeferredSubmissionKicksOnceAtTheSyncPoint)
{
    ring_.set_deferred(true);
    for (int i = 0; i < 5; ++i)
        put(0, i, true);
    EXPECT_EQ(ring_.stats().doorbells, 0u);
    EXPECT_EQ(doorbell_, 0u);
    EXPECT_EQ(ring_.producer(), 5u); // published all the same
    start_device();
    RingProducer::Slot s = put(0, 9, false);
    ASSERT_EQ(ring_.wait(s, nullptr), 0u);
    EXPECT_EQ(ring_.stats().doorbells, 1u);
    EXPECT_EQ(doorbell_, 6u);
    ring_.flush(); // nothing new: no kick
    EXPECT_EQ(ring_.stats().doorbells, 1u);
}

TEST_F(GuestRing, DeferredFullRingFlushesBeforeWaiting)
{
    ring_.set_deferred(true);
    start_device();
    for (uint32_t i = 0; i < 3 * kEntries; ++i)
        put(0, i, true);
    ASSERT_EQ(ring_.drain(), 0u); // no wait timed out: every kick the sleeping device needed came
    EXPECT_GE(ring_.stats().ring_full, 1u);
    // At least the flush of the first full ring. More only if the device
    // emptied the ring and slept meanwhile: a device that keeps up with the
    // refills never sleeps, so it asks for no further kick (event index).
    EXPECT_GE(ring_.stats().doorbells, 1u);
}

TEST_F(GuestRing, TimeoutIsReportedAndSticks)
{
    RingProducer r;
    ASSERT_TRUE(r.init(short_timeout_config(nullptr))); // polling device: no kicks
    RingProducer::Slot s;
    ASSERT_EQ(r.reserve(&s), 0u);
    r.submit(s);
    EXPECT_EQ(r.wait(s, nullptr), RingProducer::kTimeout); // no device thread
    EXPECT_EQ(r.failure(), RingProducer::kTimeout);
    EXPECT_EQ(r.reserve(&s), RingProducer::kTimeout);
    EXPECT_EQ(r.stats().doorbells, 0u);
}

TEST_F(GuestRing, FullRingWithoutDeviceTimesOut)
{
    RingProducer r;
    ASSERT_TRUE(r.init(short_timeout_config(&doorbell_)));
    RingProducer::Slot s;
    for (uint32_t i = 0; i < kEntries; ++i) {
        ASSERT_EQ(r.reserve(&s), 0u);
        r.submit(s);
    }
    EXPECT_EQ(r.reserve(&s), RingProducer::kTimeout);
    EXPECT_EQ(r.stats().ring_full, 1u);
}

} // namespace
