// The command ring in guest RAM, seen from the device: reads the guest's
// producer index, copies each descriptor and its payload out of guest RAM
// before anything looks at them, hands the copy to a CommandSink, and writes
// the completion back (result and status first, seq last with release
// ordering, then the consumer index).
//
// Everything in the ring is guest-owned and hostile; the only state the
// device trusts is its own consumer count, kept here and never read back.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kvmtool-gpu/abi/vgpu_abi.h"
#include "memmap/guest_memory.h"

namespace kvmgpu::vgpu {

// One command, copied out of the ring: the guest can no longer change it.
// Every field is still guest-chosen and unvalidated. Only the payload's
// first desc.payload_len bytes (at most VGPU_PAYLOAD_BYTES) are copied: the
// rest is left from an earlier command, and no handler reads past
// payload_len (one that answers in the payload fills all of it).
struct GuestCommand {
    vgpu_command desc;
    uint32_t slot;
    alignas(16) std::array<uint8_t, VGPU_PAYLOAD_BYTES> payload;
};

// What the device writes back for one command.
struct CommandResult {
    uint32_t status = VGPU_SUCCESS;
    uint64_t result[2] = {0, 0};
    bool write_payload = false; // copy GuestCommand::payload back into the slot
};

// Executes one copied command. Implementations never throw on guest input.
class CommandSink {
public:
    virtual ~CommandSink() = default;
    virtual CommandResult execute(GuestCommand& cmd) = 0;
    // A sink for which one call per command costs a round trip (a remote
    // GPU) takes them in batches: asynchronous commands, up to and with the
    // first synchronous one, at most batch_limit(). The results come back in
    // order, and only then are the commands completed.
    virtual uint32_t batch_limit() const { return 1; }
    virtual void execute_batch(std::span<GuestCommand> cmds, std::span<CommandResult> out) {
        for (size_t i = 0; i < cmds.size(); ++i) out[i] = execute(cmds[i]);
    }
};

// Why ENABLE refused a ring (reported in VGPU_REG_ERROR).
enum class RingError { None, Misaligned, BadSize, OutsideRam };

class CommandRing {
public:
    // Checks what ENABLE must: gpa 4 KiB aligned, entries a power of two in
    // [VGPU_MIN_RING, max_entries], the whole ring inside one region of
    // guest RAM. The device's consumer starts at `consumer` (ENABLE: 0; a
    // GPU worker: where the ring was handed to it) and is written there.
    static std::optional<CommandRing> attach(const memmap::GuestMemory& mem, uint64_t gpa, uint32_t entries,
                                             uint32_t max_entries, RingError* why, uint32_t consumer = 0);

    enum class Pass { Idle, Progress, Broken };
    // Runs at most `max` commands (and never more than the ring holds).
    // Stops early, between commands, once `stop` is set. Broken when the
    // guest's producer is more than `entries` ahead of the consumer. With
    // `progress`, the consumer is stored there after each command, before
    // the guest can see it (a GPU worker tells the VMM how far it got).
    Pass run_pass(CommandSink& sink, uint32_t max, const std::atomic<bool>& stop, uint32_t* done,
                  std::atomic<uint32_t>* progress = nullptr);

    // Guest's producer differs from the device's consumer (cheap; for polling).
    bool has_work() const { return load_producer() != consumer_; }
    // ... from `consumer` (another process's copy of this ring got that far).
    bool has_work_from(uint32_t consumer) const { return load_producer() != consumer; }
    // Takes over where another copy of this ring stopped (a replaced GPU
    // worker's): the consumer is set and published, and the next command kicks.
    void resume_at(uint32_t consumer);

    // The event index (vgpu_abi.h). Before sleeping: publishes "sleeping,
    // kick at the consumer" and makes a full barrier; the caller then looks
    // at has_work() once more and sleeps only if it is false.
    void arm_kick();
    // Awake and polling again: the guest's next commands need no kick.
    void disarm_kick();
    // Completes the command in hand (at the consumer) with `r` without
    // running it, and moves past it: for a command whose worker was lost.
    // Nothing when the ring holds no command.
    void fail_in_hand(const CommandResult& r);

    uint32_t entries() const { return entries_; }
    uint64_t gpa() const { return gpa_; }
    uint32_t consumer() const { return consumer_; }

private:
    CommandRing(uint8_t* base, uint64_t gpa, uint32_t entries) : base_(base), gpa_(gpa), entries_(entries) {}
    uint32_t load_producer() const;
    void copy_in(uint32_t slot, GuestCommand* out) const;
    Pass run_batches(CommandSink& sink, uint32_t budget, const std::atomic<bool>& stop, uint32_t* done,
                     std::atomic<uint32_t>* progress);
    void complete(const GuestCommand& cmd, const CommandResult& r);
    void publish_consumer();
    void publish_event(uint32_t kick_event, uint32_t state);

    uint8_t* base_; // host view of the whole ring, validated at attach()
    uint64_t gpa_;
    uint32_t entries_;
    uint32_t consumer_ = 0;
    std::vector<GuestCommand> batch_; // a batching sink's commands in hand
    std::vector<CommandResult> batch_results_;
};

} // namespace kvmgpu::vgpu
