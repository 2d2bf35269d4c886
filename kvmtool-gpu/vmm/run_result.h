// What one guest run produced: how it ended, its exit code, timings and
// exit counts. Printed by the CLI, asserted by tests, recorded by benches.
#pragma once

#include <linux/kvm.h>

#include <cstdint>
#include <string>

#include "kvmtool-gpu/vmm/execution_mode.h"

namespace kvmgpu {

enum class RunOutcome {
    GuestExit,     // the guest wrote the exit port
    Timeout,       // the watchdog stopped it
    GuestFault,    // an exception in the guest, reported by the VMM's stubs (fault port)
    TripleFault,   // KVM_EXIT_SHUTDOWN: an exception that could not even be delivered
    Halted,        // HLT with interrupts off, exit port never written
    EntryFailed,   // KVM_EXIT_FAIL_ENTRY
    InternalError, // KVM_EXIT_INTERNAL_ERROR
    Unexpected,    // any other exit reason
    BadRequest,    // the guest asked the CPU control device for something impossible
    Interrupted,   // request_stop() (Ctrl-C) ended it
};
const char* to_string(RunOutcome o);

struct RunTimings {
    uint64_t setup_ns = 0;             // VM creation began -> ready to enter the guest
    uint64_t first_instruction_ns = 0; // VM creation began -> guest's entry marker
    uint64_t main_ns = 0;              // VM creation began -> guest's main() marker
    uint64_t run_ns = 0;               // first KVM_RUN -> exit
    uint64_t prefault_ns = 0;          // timed separately when --prefault
};

struct ExitCounts {
    uint64_t mmio = 0, pio = 0, interrupted = 0, total = 0;
};

struct RunResult {
    RunOutcome outcome = RunOutcome::Unexpected;
    uint32_t exit_code = 0;
    std::string detail;        // one line, for the user
    std::string register_dump; // set for unexpected exits
    kvm_regs final_regs{};
    RunTimings timings;
    ExitCounts exits;
    ExecutionMode execution; // how the guest's code ran (measured by its runtime's calibration loop)
    std::string syscalls;    // Linux-ABI guests: the system-call counters, one line
    bool passed() const { return outcome == RunOutcome::GuestExit && exit_code == 0; }
};

} // namespace kvmgpu
