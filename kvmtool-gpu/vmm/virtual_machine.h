// One guest: its RAM, buses, platform devices and first vCPU, assembled
// from VmOptions, and its run: the first vCPU's thread runs the vCPU loop
// (vcpu_loop.h) until the guest reports, faults or times out. A Linux-ABI
// guest's further threads run the same loop on vCPUs of their own
// (guest_threads.h); how the run ends is group_exit.h's. Several VMs may
// live in one process.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kvmtool-gpu/bus/bus.h"
#include "kvmtool-gpu/devices/boot_marker.h"
#include "kvmtool-gpu/devices/cpu_control.h"
#include "kvmtool-gpu/devices/debug_console.h"
#include "kvmtool-gpu/devices/exit_device.h"
#include "kvmtool-gpu/kvm/kvm_system.h"
#include "kvmtool-gpu/kvm/vcpu_fd.h"
#include "kvmtool-gpu/kvm/vm_fd.h"
#include "kvmtool-gpu/vmm/elf_loader.h"
#include "kvmtool-gpu/vmm/execution_mode.h"
#include "kvmtool-gpu/vmm/group_exit.h"
#include "kvmtool-gpu/vmm/guest_threads.h"
#include "kvmtool-gpu/vmm/linux/linux_process.h"
#include "kvmtool-gpu/vmm/run_result.h"
#include "kvmtool-gpu/vmm/vcpu_loop.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"
#include "memmap/guest_memory.h"

namespace kvmgpu {

struct VmOptions {
    uint64_t ram_bytes = 512ull << 20;
    memmap::PageSize host_pages = memmap::PageSize::k4K;
    // host_pages was a choice (--pages auto), not a demand: where the huge
    // page pool runs short when RAM is mapped (another process reserved
    // pages since the pool was read), 4 KiB pages with a warning instead.
    bool host_pages_chosen = false;
    bool prefault = false;
    std::string guest_path;   // ELF image
    std::string cmdline;      // passed to the guest
    double timeout_s = 60.0;  // 0: none
    uint64_t seed = 1;
    DebugConsole::Sink console; // default: stdout, prefixed "guest: "
    // Confine the thread that calls run() with the vCPU seccomp filter
    // (vcpu_seccomp.h) before the first KVM_RUN. Irreversible for that
    // thread, which may then do little but run(): destroy the VM on
    // another (closing fds is not allowed). Off by default here;
    // `kvmtool-gpu run` turns it on and runs the vCPU on its own thread.
    bool seccomp = false;
    // For a Linux-ABI guest (a static Linux executable, told apart from a
    // project image by linux_elf.h): its arguments, environment and share.
    linux_abi::LinuxGuestOptions linux;
};

// Checks options and the guest image without touching KVM, so bad input is
// reported before /dev/kvm is even opened. Throws like the constructor.
void validate_options(const VmOptions& opts);

class VirtualMachine {
public:
    // Builds the whole VM; throws (KvmError, ImageError, HugePagePoolError,
    // std::invalid_argument) with a one-line reason on any set-up failure.
    VirtualMachine(const KvmSystem& kvm, VmOptions opts);
    ~VirtualMachine();

    // Extra devices (the vGPU) are claimed before run().
    Bus& mmio_bus() { return mmio_; }
    VmFd& vm_fd() { return *vm_; }
    VcpuFd& vcpu() { return *vcpu_; } // e.g. for its KVM statistics fd
    const memmap::GuestMemory& memory() const { return memory_; }
    const LoadedImage& image() const { return image_; }
    // The Linux-ABI process, or nullptr for a project image.
    const linux_abi::LinuxProcess* linux_process() const { return linux_.get(); }
    const VmOptions& options() const { return opts_; }

    // Runs the vCPU on the calling thread until the guest exits, faults or
    // times out. Never throws for anything the guest does; with
    // options().seccomp, throws std::system_error before the first KVM_RUN
    // if the filter cannot be installed.
    RunResult run();
    // Ends run() (now, or at its start if it has not begun) with outcome
    // Interrupted. Any thread may call it, e.g. on Ctrl-C.
    void request_stop();

private:
    // The run's result from its end and the first vCPU's exits.
    RunResult finish(GroupEnd end, const ExitCounts& exits);

    VmOptions opts_;
    std::chrono::steady_clock::time_point t0_;
    std::unique_ptr<VmFd> vm_;
    memmap::GuestMemory memory_;
    Bus mmio_{"mmio"};
    Bus pio_{"pio"};
    std::shared_ptr<DebugConsole> console_;
    std::shared_ptr<BootMarker> marker_;
    std::shared_ptr<ExitDevice> exit_;
    std::shared_ptr<CpuControl> cpu_control_;
    std::unique_ptr<ExecutionProbe> execution_;
    std::unique_ptr<VcpuFd> vcpu_;
    LoadedImage image_;
    std::unique_ptr<linux_abi::LinuxProcess> linux_;
    GroupExit group_;
    std::unique_ptr<VcpuLoop> loop_;
    std::unique_ptr<GuestThreads> threads_; // Linux-ABI guests only
    uint64_t setup_ns_ = 0;
    uint64_t prefault_ns_ = 0;
    std::mutex stop_mu_; // guards stop_requested_ and running_watchdog_
    bool stop_requested_ = false;
    VcpuWatchdog* running_watchdog_ = nullptr;
};

} // namespace kvmgpu
