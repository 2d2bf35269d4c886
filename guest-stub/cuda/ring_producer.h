// The guest's side of the vGPU command ring (layout in vgpu_abi.h): fills
// slots, publishes the producer index, rings the doorbell, waits for
// completions with a bounded spin, and collects the errors of asynchronous
// commands until the next synchronization point.
//
// submit() and flush() are separate so submission can be deferred: with
// deferred on, submit() only publishes and flush() decides once for
// everything published since the last decision; it kicks only when the
// device's event index asks for it (the consumer sleeps, vgpu_abi.h); wait() and a full ring
// flush first, so nothing can wait on a command the device was never told
// about. Pure apart from rdtsc/pause: the unit tests run it against a
// device thread on the host.
#pragma once

#include <stdint.h>

#include "kvmtool-gpu/abi/vgpu_abi.h"

namespace guest {

class RingProducer {
public:
    // Guest-detected failures (CUresult numbers, see guest_cuda.h).
    static constexpr uint32_t kTimeout = VGPU_ERROR_TIMEOUT;
    static constexpr uint32_t kBrokenRing = VGPU_ERROR_ILLEGAL_STATE;

    struct Config {
        void* mem = nullptr;                  // vgpu_ring_bytes(entries), zeroed, 4 KiB aligned
        uint32_t entries = 0;                 // power of two >= VGPU_MIN_RING
        volatile uint32_t* doorbell = nullptr; // nullptr: never kick (polling device)
        uint64_t timeout_ticks = 0;           // bound on each wait, in TSC ticks
    };

    struct Slot {
        vgpu_command* cmd;
        uint8_t* payload; // VGPU_PAYLOAD_BYTES
        uint32_t index;   // free-running producer index of this slot
        uint64_t seq;
    };

    bool init(const Config& config);

    // Next free slot (waits, bounded, while the ring is full). The command
    // is zeroed except seq; the payload is left as it was.
    uint32_t reserve(Slot* slot);
    // Publishes the reserved slot (store-release of producer), then kicks
    // unless deferred.
    void submit(const Slot& slot);
    // Kicks the doorbell if anything was published since the last flush
    // and the device's event index lies in what was published.
    void flush();
    // Flushes, then waits for slot's completion; *out gets a copy of it.
    // Returns 0 or kTimeout. Collects async errors up to this slot.
    uint32_t wait(const Slot& slot, vgpu_completion* out);
    // Waits until the device has consumed everything published.
    uint32_t drain();

    // First error of an ASYNC command seen since the last take (0 if none); clears it.
    uint32_t take_async_error();

    void set_deferred(bool on) { deferred_ = on; }
    bool deferred() const { return deferred_; }
    // After a timeout the ring is unusable: every call returns this (0 = fine).
    uint32_t failure() const { return failure_; }
    void set_failure(uint32_t status) { failure_ = status; }

    uint32_t entries() const { return entries_; }
    uint32_t producer() const { return producer_; }
    uint32_t consumer() const { return header()->consumer; }

    struct Stats {
        uint64_t commands, doorbells, waits, ring_full, spin_loops;
        uint64_t kicks_suppressed; // flushes the event index said need no kick
    };
    const Stats& stats() const { return stats_; }

private:
    vgpu_ring_header* header() const { return reinterpret_cast<vgpu_ring_header*>(base_); }
    vgpu_command* command(uint32_t slot) const
    {
        return reinterpret_cast<vgpu_command*>(base_ + vgpu_command_offset(slot));
    }
    volatile vgpu_completion* completion(uint32_t slot) const
    {
        return reinterpret_cast<volatile vgpu_completion*>(base_ + vgpu_completion_offset(entries_, slot));
    }
    // Looks at completions of indices [harvested_, upto): records the first
    // ASYNC error. Stops at the first not yet complete unless `consumed`
    // (the device's consumer index passed them: their slots may be reused).
    void harvest(uint32_t upto, bool consumed);
    // Spins (pause) until done() holds; false, and the ring marked failed
    // with kTimeout, if that takes longer than the timeout.
    template <class Done>
    bool spin_until(Done done);

    uint8_t* base_ = nullptr;
    uint32_t entries_ = 0;
    volatile uint32_t* doorbell_ = nullptr;
    uint64_t timeout_ticks_ = 0;
    uint32_t producer_ = 0;  // next index to fill
    uint32_t kicked_ = 0;    // producer value at the last kick decision
    uint32_t harvested_ = 0; // indices below this were checked for async errors
    uint64_t next_seq_ = 1;
    uint32_t async_error_ = 0;
    uint32_t failure_ = 0;
    bool deferred_ = false;
    Stats stats_{};
};

} // namespace guest
