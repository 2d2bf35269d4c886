// What one vGPU has done, for benches and result tables. Written by the
// executor thread (and the doorbell on vCPU threads), read by anyone:
// relaxed atomics, so a snapshot is a consistent-enough sample, not a cut.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "kvmtool-gpu/abi/vgpu_abi.h"

namespace kvmgpu::vgpu {

// A plain copy of the counters at one moment.
struct VgpuCounterSnapshot {
    uint64_t commands = 0;       // commands completed (any status)
    uint64_t errors = 0;         // ... of which status != VGPU_SUCCESS
    uint64_t bad_opcodes = 0;    // opcode outside the table (counted in errors too)
    uint64_t bytes_htod = 0;     // bytes copied guest RAM -> device
    uint64_t bytes_dtoh = 0;     // device -> guest RAM
    uint64_t bytes_dtod = 0;
    uint64_t sg_entries = 0;     // scatter-gather entries received
    uint64_t sg_runs = 0;        // ... host runs after translation/coalescing
    uint64_t kicks = 0;          // doorbell writes seen by the device (Trap mode)
    uint64_t wakeups = 0;        // the ring's consumer woke from sleep
    uint64_t missed_kicks = 0;   // ... by its time-out, with commands waiting: published without the kick asked for
    uint64_t passes = 0;         // ring passes that found work
    uint64_t max_pass = 0;       // most commands handled in one pass
    uint64_t broken = 0;         // rings declared broken
    uint64_t recoveries = 0;     // sticky-error recoveries (context re-created)
    uint64_t ram_registered_bytes = 0; // guest RAM registered with the GPU so far (lazily: as reached)
    uint64_t ram_register_ns = 0;      // ... and the time registering took
    std::array<uint64_t, VGPU_OP_MAX_> per_opcode{};
    std::array<uint64_t, VGPU_OP_MAX_> waited_per_opcode{}; // ... of them without VGPU_CMD_FLAG_ASYNC: the guest waited
};

struct VgpuCounters {
    std::atomic<uint64_t> commands{0}, errors{0}, bad_opcodes{0};
    std::atomic<uint64_t> bytes_htod{0}, bytes_dtoh{0}, bytes_dtod{0};
    std::atomic<uint64_t> sg_entries{0}, sg_runs{0};
    std::atomic<uint64_t> kicks{0}, wakeups{0}, missed_kicks{0}, passes{0}, max_pass{0};
    std::atomic<uint64_t> broken{0}, recoveries{0};
    std::atomic<uint64_t> ram_registered_bytes{0}, ram_register_ns{0}; // gauges, stored after each command
    std::array<std::atomic<uint64_t>, VGPU_OP_MAX_> per_opcode{};
    std::array<std::atomic<uint64_t>, VGPU_OP_MAX_> waited_per_opcode{};

    static void add(std::atomic<uint64_t>& c, uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }
    // A ring pass that ran `done` commands (by the one thread or process
    // that runs the ring's passes, so max_pass has a single writer).
    void count_pass(uint64_t done) {
        add(passes);
        if (done > max_pass.load(std::memory_order_relaxed)) max_pass.store(done, std::memory_order_relaxed);
    }

    VgpuCounterSnapshot snapshot() const {
        auto ld = [](const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); };
        VgpuCounterSnapshot s;
        s.commands = ld(commands), s.errors = ld(errors), s.bad_opcodes = ld(bad_opcodes);
        s.bytes_htod = ld(bytes_htod), s.bytes_dtoh = ld(bytes_dtoh), s.bytes_dtod = ld(bytes_dtod);
        s.sg_entries = ld(sg_entries), s.sg_runs = ld(sg_runs);
        s.kicks = ld(kicks);
        s.wakeups = ld(wakeups), s.missed_kicks = ld(missed_kicks);
        s.passes = ld(passes), s.max_pass = ld(max_pass), s.broken = ld(broken), s.recoveries = ld(recoveries);
        s.ram_registered_bytes = ld(ram_registered_bytes), s.ram_register_ns = ld(ram_register_ns);
        for (size_t i = 0; i < per_opcode.size(); ++i) {
            s.per_opcode[i] = ld(per_opcode[i]);
            s.waited_per_opcode[i] = ld(waited_per_opcode[i]);
        }
        return s;
    }
};

} // namespace kvmgpu::vgpu
