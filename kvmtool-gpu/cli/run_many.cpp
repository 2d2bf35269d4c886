#include "kvmtool-gpu/cli/run_many.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "kvmtool-gpu/cli/interrupt_stop.h"
#include "kvmtool-gpu/cli/vm_share.h"
#include "kvmtool-gpu/devices/terminal_text.h"

namespace kvmgpu::cli {

namespace {
struct Guest {
    std::unique_ptr<VirtualMachine> vm;
    std::optional<AttachedVgpu> vgpu;
    RunResult result;
    std::exception_ptr failed;
    bool backend_named = false; // its vGPU backend was up at attach and named then
};
} // namespace

int run_many(const KvmSystem& kvm, const VmOptions& o, const std::optional<VgpuConfig>& vgpu, unsigned vms) {
    std::vector<Guest> guests(vms);
    std::mutex built_mu; // the VMs built so far, for the signal thread
    unsigned built = 0;
    bool interrupted = false;
    StopOnInterrupt stop_on_ctrl_c([&](int) {
        std::lock_guard lock(built_mu);
        interrupted = true;
        std::printf("kvmtool-gpu: interrupted: stopping every VM (again to quit at once)\n");
        std::fflush(stdout);
        for (unsigned i = 0; i < built; ++i) guests[i].vm->request_stop();
    });
    for (unsigned i = 0; i < vms; ++i) {
        VmOptions mine = o;
        mine.seed = o.seed + i;
        for (auto& share : mine.linux.shares) share.dir = share_dir_for_vm(share.dir, share.read_only, i, vms);
        if (!mine.linux.syscall_trace.empty()) mine.linux.syscall_trace += ".vm" + std::to_string(i);
        if (!o.console)
            mine.console = [i](std::string_view line) {
                const std::string safe = escape_for_terminal(line); // no escape sequences reach the terminal
                std::printf("guest[%u]: %s\n", i, safe.c_str());
                std::fflush(stdout);
            };
        {
            auto vm = std::make_unique<VirtualMachine>(kvm, mine);
            std::lock_guard lock(built_mu);
            guests[i].vm = std::move(vm);
            if (interrupted) guests[i].vm->request_stop();
            ++built;
        }
        if (vgpu) {
            guests[i].vgpu = attach_vgpu(*guests[i].vm, *vgpu);
            const auto& v = *guests[i].vgpu;
            // A worker still starting CUDA: its backend is named after the run.
            guests[i].backend_named = v.device->ready();
            std::printf("kvmtool-gpu: [vm %u] vGPU backend: %s\n", i,
                        (v.backend_note.empty() ? v.device->backend_description() : v.backend_note).c_str());
        }
    }
    std::fflush(stdout);
    // Each vCPU on a thread of its own (run() confines it with seccomp).
    std::vector<std::thread> threads;
    for (Guest& g : guests)
        threads.emplace_back([&g] {
            try {
                g.result = g.vm->run();
            } catch (...) {
                g.failed = std::current_exception();
            }
        });
    for (auto& t : threads) t.join();
    unsigned passed = 0;
    for (unsigned i = 0; i < vms; ++i) {
        Guest& g = guests[i];
        if (g.failed) {
            try {
                std::rethrow_exception(g.failed);
            } catch (const std::exception& e) {
                std::printf("kvmtool-gpu: [vm %u] error: %s\n", i, e.what());
            }
            continue;
        }
        std::printf("kvmtool-gpu: [vm %u] result: %s, exit code %u (%s); run %.3f ms; guest code: %s\n", i,
                    to_string(g.result.outcome), g.result.exit_code, g.result.passed() ? "pass" : "FAIL",
                    g.result.timings.run_ns * 1e-6, g.result.execution.describe().c_str());
        if (!g.result.passed() && g.result.outcome != RunOutcome::GuestExit)
            std::printf("kvmtool-gpu: [vm %u] %s\n", i, g.result.detail.c_str());
        if (!g.result.syscalls.empty())
            std::printf("kvmtool-gpu: [vm %u] system calls: %s\n", i, g.result.syscalls.c_str());
        if (g.vgpu) {
            const auto c = g.vgpu->device->counters();
            if (!g.backend_named)
                std::printf("kvmtool-gpu: [vm %u] vGPU backend: %s (up %.1f ms after the device started)\n", i,
                            g.vgpu->device->backend_description().c_str(), g.vgpu->device->ready_after_ns() * 1e-6);
            std::printf("kvmtool-gpu: [vm %u] vGPU: %llu commands, %llu errors\n", i,
                        static_cast<unsigned long long>(c.commands), static_cast<unsigned long long>(c.errors));
        }
        passed += g.result.passed();
    }
    std::printf("kvmtool-gpu: %u VMs at once%s: %u passed, %u failed\n", vms,
                vgpu ? ", each with a vGPU of its own" : "", passed, vms - passed);
    return passed == vms ? 0 : 1;
}

} // namespace kvmgpu::cli
