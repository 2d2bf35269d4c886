#include "kvmtool-gpu/cli/run_many.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kvmtool-gpu/cli/interrupt_stop.h"
#include "kvmtool-gpu/cli/vgpu_report.h"
#include "kvmtool-gpu/cli/vm_share.h"
#include "kvmtool-gpu/devices/terminal_text.h"

namespace kvmgpu::cli {

namespace {
struct Guest {
    std::unique_ptr<Machine> vm;
    Result result;
    std::string error;          // the run could not even start (one line)
    bool backend_named = false; // its vGPU backend was up at attach and named then
};
} // namespace

int run_many(const VmConfig& c, unsigned vms) {
    std::vector<Guest> guests(vms);
    std::mutex built_mu; // the VMs built so far, for the signal thread
    unsigned built = 0;
    bool interrupted = false;
    StopOnInterrupt stop_on_ctrl_c([&](int) {
        std::lock_guard lock(built_mu);
        interrupted = true;
        std::printf("kvmtool-gpu: interrupted: stopping every VM (again to quit at once)\n");
        std::fflush(stdout);
        for (unsigned i = 0; i < built; ++i) guests[i].vm->stop();
    });
    for (unsigned i = 0; i < vms; ++i) {
        VmConfig mine = c;
        // --seed S: S, S + 1, ...; none: each its default (seed 1, the host's randomness)
        if (c.seed) mine.seed = *c.seed + i;
        for (auto& share : mine.shares) share.host_dir = share_dir_for_vm(share.host_dir, share.read_only, i, vms);
        if (!mine.syscall_trace.empty()) mine.syscall_trace += ".vm" + std::to_string(i);
        if (!c.console)
            mine.console = [i](std::string_view line) {
                const std::string safe = escape_for_terminal(line); // no escape sequences reach the terminal
                std::printf("guest[%u]: %s\n", i, safe.c_str());
                std::fflush(stdout);
            };
        {
            auto vm = std::make_unique<Machine>(mine);
            std::lock_guard lock(built_mu);
            guests[i].vm = std::move(vm);
            if (interrupted) guests[i].vm->stop();
            ++built;
        }
        if (c.vgpu) {
            const MachineSummary info = guests[i].vm->info();
            // A worker still starting CUDA: its backend is named after the run.
            guests[i].backend_named = info.vgpu_ready;
            std::printf("kvmtool-gpu: [vm %u] vGPU backend: %s\n", i, info.vgpu_backend.c_str());
        }
    }
    std::fflush(stdout);
    // Each in the background (the library's thread, which run confines with seccomp).
    for (Guest& g : guests) g.vm->start();
    for (Guest& g : guests) {
        try {
            g.result = g.vm->wait();
        } catch (const Error& e) {
            g.error = e.what();
        }
    }
    unsigned passed = 0;
    for (unsigned i = 0; i < vms; ++i) {
        Guest& g = guests[i];
        if (!g.error.empty()) {
            std::printf("kvmtool-gpu: [vm %u] error: %s\n", i, g.error.c_str());
            continue;
        }
        std::printf("kvmtool-gpu: [vm %u] result: %s, exit code %u (%s); run %.3f ms; guest code: %s\n", i,
                    to_string(g.result.outcome), g.result.exit_code, g.result.passed() ? "pass" : "FAIL",
                    g.result.timings.run_ns * 1e-6, g.result.guest_code.c_str());
        if (!g.result.passed() && g.result.outcome != Outcome::GuestExit)
            std::printf("kvmtool-gpu: [vm %u] %s\n", i, g.result.detail.c_str());
        if (!g.result.syscalls.empty())
            std::printf("kvmtool-gpu: [vm %u] system calls: %s\n", i, g.result.syscalls.c_str());
        if (c.vgpu) {
            const VgpuCounters n = g.vm->vgpu_counters();
            if (!g.backend_named) {
                const VgpuStatus s = g.vm->vgpu_status();
                std::printf("kvmtool-gpu: [vm %u] vGPU backend: %s (up %.1f ms after the device started)\n", i,
                            s.backend.c_str(), s.ready_after_ns * 1e-6);
            }
            std::printf("kvmtool-gpu: [vm %u] vGPU: %s\n", i, describe_commands(n).c_str());
        }
        passed += g.result.passed();
    }
    std::printf("kvmtool-gpu: %u VMs at once%s: %u passed, %u failed\n", vms,
                c.vgpu ? ", each with a vGPU of its own" : "", passed, vms - passed);
    return passed == vms ? 0 : 1;
}

} // namespace kvmgpu::cli
