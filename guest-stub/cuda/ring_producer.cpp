// Guest command-ring producer (see ring_producer.h).
#include "guest-stub/cuda/ring_producer.h"

namespace guest {
namespace {

inline uint64_t ticks()
{
    uint32_t lo, hi;
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

inline void relax() { asm volatile("pause" ::: "memory"); }
inline void barrier() { asm volatile("" ::: "memory"); }
// Orders the producer store before the kick_event load (x86 lets a load
// pass an earlier store; this is the one place that matters).
inline void full_barrier() { asm volatile("mfence" ::: "memory"); }

} // namespace

template <class Done>
bool RingProducer::spin_until(Done done)
{
    if (done())
        return true;
    uint64_t start = ticks();
    while (!done()) {
        relax();
        ++stats_.spin_loops;
        if (ticks() - start > timeout_ticks_) {
            failure_ = kTimeout;
            return false;
        }
    }
    return true;
}

bool RingProducer::init(const Config& c)
{
    if (c.mem == nullptr || c.entries < VGPU_MIN_RING || (c.entries & (c.entries - 1)) != 0 ||
        (reinterpret_cast<uintptr_t>(c.mem) & 4095) != 0 || c.timeout_ticks == 0)
        return false;
    base_ = static_cast<uint8_t*>(c.mem);
    entries_ = c.entries;
    doorbell_ = c.doorbell;
    timeout_ticks_ = c.timeout_ticks;
    producer_ = kicked_ = harvested_ = header()->producer;
    next_seq_ = 1;
    async_error_ = failure_ = 0;
    stats_ = Stats{};
    return true;
}

void RingProducer::harvest(uint32_t upto, bool consumed)
{
    while ((int32_t)(upto - harvested_) > 0) { // free-running indices
        uint32_t slot = harvested_ & (entries_ - 1);
        const vgpu_command* cmd = command(slot);
        volatile vgpu_completion* comp = completion(slot);
        if (comp->seq != cmd->seq) {
            if (!consumed)
                return; // not done yet: look again later
        } else {
            barrier(); // seq read before status (x86: loads are not reordered)
            if ((cmd->flags & VGPU_CMD_FLAG_ASYNC) != 0 && comp->status != 0 && async_error_ == 0)
                async_error_ = comp->status;
        }
        ++harvested_;
    }
}

uint32_t RingProducer::reserve(Slot* s)
{
    if (failure_ != 0)
        return failure_;
    if (producer_ - header()->consumer >= entries_) {
        ++stats_.ring_full;
        flush(); // the device may not know about what fills the ring
        if (!spin_until([&] { return producer_ - header()->consumer < entries_; }))
            return failure_;
    }
    barrier();
    harvest(header()->consumer, true); // before this slot's old record is overwritten
    uint32_t slot = producer_ & (entries_ - 1);
    vgpu_command* cmd = command(slot);
    *cmd = vgpu_command{};
    cmd->seq = next_seq_++;
    s->cmd = cmd;
    s->payload = base_ + vgpu_payload_offset(entries_, slot);
    s->index = producer_;
    s->seq = cmd->seq;
    return 0;
}

void RingProducer::submit(const Slot& s)
{
    (void)s; // slots are published in reservation order
    barrier(); // descriptor and payload stores before the producer store (TSO)
    header()->producer = ++producer_;
    ++stats_.commands;
    if (!deferred_)
        flush();
}

void RingProducer::flush()
{
    if (kicked_ == producer_)
        return;
    const uint32_t old = kicked_;
    kicked_ = producer_;
    if (doorbell_ == nullptr)
        return;
    // The event index (vgpu_abi.h): kick only if the consumer said it
    // sleeps at an index this flush publishes.
    full_barrier();
    if (vgpu_need_kick(header()->kick_event, producer_, old)) {
        *doorbell_ = producer_;
        ++stats_.doorbells;
    } else {
        ++stats_.kicks_suppressed;
    }
}

uint32_t RingProducer::wait(const Slot& s, vgpu_completion* out)
{
    if (failure_ != 0)
        return failure_;
    flush();
    ++stats_.waits;
    volatile vgpu_completion* comp = completion(s.index & (entries_ - 1));
    // Done when its record shows its seq, or when the device consumed past
    // it (then the slot may hold a newer command; its status was harvested).
    auto done = [&] {
        return comp->seq == s.seq || (int32_t)(header()->consumer - (s.index + 1)) >= 0;
    };
    if (!spin_until(done))
        return failure_;
    barrier();
    if (out != nullptr && comp->seq != s.seq) {
        *out = vgpu_completion{}; // overtaken: only its async error (if any) is known
        out->seq = s.seq;
    } else if (out != nullptr) {
        out->seq = comp->seq;
        out->status = comp->status;
        out->reserved = 0;
        out->result[0] = comp->result[0];
        out->result[1] = comp->result[1];
    }
    harvest(s.index + 1, false);
    return 0;
}

uint32_t RingProducer::drain()
{
    if (failure_ != 0)
        return failure_;
    flush();
    if (!spin_until([&] { return header()->consumer == producer_; }))
        return failure_;
    barrier();
    harvest(producer_, true);
    return 0;
}

uint32_t RingProducer::take_async_error()
{
    uint32_t e = async_error_;
    async_error_ = 0;
    return e;
}

} // namespace guest
