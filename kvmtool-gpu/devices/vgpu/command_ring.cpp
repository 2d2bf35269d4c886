#include "kvmtool-gpu/devices/vgpu/command_ring.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace kvmgpu::vgpu {

namespace {
constexpr uint64_t kRingAlign = 4096;

// The ring's shared words are naturally aligned (4 KiB-aligned base, fixed
// offsets), so atomic_ref on them is valid.
uint32_t* word32(uint8_t* base, uint64_t off) { return reinterpret_cast<uint32_t*>(base + off); }
uint64_t* word64(uint8_t* base, uint64_t off) { return reinterpret_cast<uint64_t*>(base + off); }
} // namespace

std::optional<CommandRing> CommandRing::attach(const memmap::GuestMemory& mem, uint64_t gpa, uint32_t entries,
                                               uint32_t max_entries, RingError* why, uint32_t consumer) {
    auto fail = [&](RingError e) {
        *why = e;
        return std::nullopt;
    };
    if (gpa % kRingAlign != 0) return fail(RingError::Misaligned);
    if (entries < VGPU_MIN_RING || entries > max_entries || (entries & (entries - 1)) != 0)
        return fail(RingError::BadSize);
    auto span = mem.translate(memmap::GuestPhysAddr{gpa}, vgpu_ring_bytes(entries));
    if (!span) return fail(RingError::OutsideRam);
    *why = RingError::None;
    CommandRing ring(span->data(), gpa, entries);
    ring.resume_at(consumer); // the next command kicks
    return ring;
}

uint32_t CommandRing::load_producer() const {
    // SAFETY: the header lies inside the ring span checked at attach().
    return std::atomic_ref<uint32_t>(*word32(base_, offsetof(vgpu_ring_header, producer)))
        .load(std::memory_order_acquire);
}

void CommandRing::publish_consumer() {
    // SAFETY: as load_producer(); the guest may scribble here, we never read it back.
    std::atomic_ref<uint32_t>(*word32(base_, offsetof(vgpu_ring_header, consumer)))
        .store(consumer_, std::memory_order_release);
}

void CommandRing::publish_event(uint32_t kick_event, uint32_t state) {
    // SAFETY: as publish_consumer(); both words are the device's, never read back.
    std::atomic_ref<uint32_t>(*word32(base_, offsetof(vgpu_ring_header, kick_event)))
        .store(kick_event, std::memory_order_relaxed);
    std::atomic_ref<uint32_t>(*word32(base_, offsetof(vgpu_ring_header, consumer_state)))
        .store(state, std::memory_order_relaxed);
}

void CommandRing::arm_kick() {
    publish_event(consumer_, VGPU_CONSUMER_SLEEPING);
    // Pairs with the guest's barrier between its producer store and its
    // kick_event load: it sees this, or our next producer load sees its command.
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

// An index the guest has already published: no kick until the next arm_kick().
void CommandRing::disarm_kick() { publish_event(consumer_ - 1, VGPU_CONSUMER_POLLING); }

void CommandRing::copy_in(uint32_t slot, GuestCommand* out) const {
    // SAFETY: slot < entries_, so descriptor and payload lie inside the ring
    // span checked at attach(). One copy each; only the copies are used
    // after. The payload's length comes from the descriptor's copy.
    std::memcpy(&out->desc, base_ + vgpu_command_offset(slot), sizeof out->desc);
    const uint32_t used = std::min<uint32_t>(out->desc.payload_len, VGPU_PAYLOAD_BYTES);
    std::memcpy(out->payload.data(), base_ + vgpu_payload_offset(entries_, slot), used);
    out->slot = slot;
}

void CommandRing::complete(const GuestCommand& cmd, const CommandResult& r) {
    if (r.write_payload) {
        // SAFETY: the slot's payload lies inside the ring span (see copy_in).
        std::memcpy(base_ + vgpu_payload_offset(entries_, cmd.slot), cmd.payload.data(), VGPU_PAYLOAD_BYTES);
    }
    uint8_t* rec = base_ + vgpu_completion_offset(entries_, cmd.slot);
    vgpu_completion body{};
    body.status = r.status;
    body.result[0] = r.result[0];
    body.result[1] = r.result[1];
    constexpr size_t kAfterSeq = offsetof(vgpu_completion, status);
    // SAFETY: the completion record lies inside the ring span; everything
    // but seq first, then seq with release so a guest that sees seq sees the rest.
    std::memcpy(rec + kAfterSeq, reinterpret_cast<const uint8_t*>(&body) + kAfterSeq, sizeof body - kAfterSeq);
    std::atomic_ref<uint64_t>(*word64(rec, offsetof(vgpu_completion, seq)))
        .store(cmd.desc.seq, std::memory_order_release);
}

void CommandRing::resume_at(uint32_t consumer) {
    consumer_ = consumer;
    publish_consumer();
    publish_event(consumer_, VGPU_CONSUMER_POLLING);
}

void CommandRing::fail_in_hand(const CommandResult& r) {
    const uint32_t pending = load_producer() - consumer_;
    if (pending == 0 || pending > entries_) return;
    GuestCommand cmd{}; // zeroed once: payload bytes past payload_len are never the guest's
    copy_in(consumer_ & (entries_ - 1), &cmd);
    complete(cmd, r);
    ++consumer_;
    publish_consumer();
}

CommandRing::Pass CommandRing::run_pass(CommandSink& sink, uint32_t max, const std::atomic<bool>& stop,
                                        uint32_t* done, std::atomic<uint32_t>* progress) {
    *done = 0;
    const uint32_t producer = load_producer();
    const uint32_t pending = producer - consumer_; // free-running indices: wraps by design
    if (pending == 0) return Pass::Idle;
    if (pending > entries_) return Pass::Broken;
    const uint32_t budget = pending < max ? pending : max;
    if (sink.batch_limit() > 1) return run_batches(sink, budget, stop, done, progress);
    GuestCommand cmd{}; // zeroed once: payload bytes past payload_len are never the guest's
    while (*done < budget && !stop.load(std::memory_order_relaxed)) {
        copy_in(consumer_ & (entries_ - 1), &cmd);
        const CommandResult r = sink.execute(cmd);
        complete(cmd, r);
        ++consumer_;
        ++*done;
        if (progress) progress->store(consumer_, std::memory_order_release);
        publish_consumer(); // per command: the guest may reuse the slot at once
    }
    return *done ? Pass::Progress : Pass::Idle;
}

CommandRing::Pass CommandRing::run_batches(CommandSink& sink, uint32_t budget, const std::atomic<bool>& stop,
                                           uint32_t* done, std::atomic<uint32_t>* progress) {
    const uint32_t limit = sink.batch_limit();
    if (batch_.size() < limit) {
        batch_.resize(limit); // value-initialised: payload bytes past payload_len are never the guest's
        batch_results_.resize(limit);
    }
    while (*done < budget && !stop.load(std::memory_order_relaxed)) {
        uint32_t n = 0;
        while (n < limit && *done + n < budget) {
            GuestCommand& cmd = batch_[n++];
            copy_in((consumer_ + n - 1) & (entries_ - 1), &cmd);
            if (!(cmd.desc.flags & VGPU_CMD_FLAG_ASYNC)) break; // the guest waits on this one
        }
        sink.execute_batch({batch_.data(), n}, {batch_results_.data(), n});
        for (uint32_t i = 0; i < n; ++i) complete(batch_[i], batch_results_[i]);
        consumer_ += n;
        *done += n;
        if (progress) progress->store(consumer_, std::memory_order_release);
        publish_consumer();
    }
    return *done ? Pass::Progress : Pass::Idle;
}

} // namespace kvmgpu::vgpu
