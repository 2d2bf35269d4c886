#include "kvmtool-gpu/vmm/virtual_machine.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "kvmtool-gpu/abi/linux_abi.h"
#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/devices/terminal_text.h"
#include "kvmtool-gpu/kvm/kvm_error.h"
#include "kvmtool-gpu/util/log.h"
#include "kvmtool-gpu/vmm/boot_state.h"
#include "kvmtool-gpu/vmm/fault_port.h"
#include "kvmtool-gpu/vmm/linux/syscall_port.h"
#include "kvmtool-gpu/vmm/vcpu_seccomp.h"
#include "kvmtool-gpu/vmm/vcpu_watchdog.h"

namespace kvmgpu {

namespace {

uint64_t ns_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

void check_ram_size(const VmOptions& o) {
    const uint64_t page = memmap::bytes(o.host_pages);
    const uint64_t align = std::max<uint64_t>(page, 2ull << 20);
    if (o.ram_bytes < (16ull << 20))
        throw std::invalid_argument("--mem must be at least 16M");
    if (o.ram_bytes % align != 0)
        throw std::invalid_argument("--mem " + std::to_string(o.ram_bytes >> 10) + "K is not a multiple of " +
                                    std::to_string(align >> 10) + "K (" + std::string(memmap::to_string(o.host_pages)) +
                                    " host pages, 2M guest boot mappings)");
    if (o.ram_bytes > max_boot_ram_bytes())
        throw std::invalid_argument("--mem exceeds the largest supported guest (" +
                                    std::to_string(max_boot_ram_bytes() >> 30) + "G)");
}

} // namespace

void validate_options(const VmOptions& opts) {
    check_ram_size(opts);
    const ImageFile file(opts.guest_path);
    const auto& l = opts.linux;
    if (linux_abi::classify_image(file) == linux_abi::ImageKind::Linux) {
        const auto image = linux_abi::inspect_linux_elf(file, linux_abi::plan_ram(opts.ram_bytes).image_limit);
        if (!image.interp.empty() && l.root_dir.empty() && l.shares.empty())
            throw ImageError("guest image refused: dynamic executable: its interpreter " + image.interp +
                             " needs --root (e.g. --root /)");
        return;
    }
    if (!l.args.empty() || !l.env.empty() || !l.shares.empty() || !l.root_dir.empty() || !l.cwd.empty())
        throw std::invalid_argument(
            "guest arguments after --, --env, --root, --share and --cwd need a Linux-ABI guest (a Linux executable)");
    inspect_elf(file, opts.ram_bytes);
}

const char* to_string(RunOutcome o) {
    switch (o) {
    case RunOutcome::GuestExit: return "guest-exit";
    case RunOutcome::Timeout: return "timeout";
    case RunOutcome::TripleFault: return "triple-fault";
    case RunOutcome::GuestFault: return "guest-fault";
    case RunOutcome::Halted: return "halted";
    case RunOutcome::EntryFailed: return "entry-failed";
    case RunOutcome::InternalError: return "kvm-internal-error";
    case RunOutcome::Unexpected: return "unexpected-exit";
    case RunOutcome::BadRequest: return "bad-cpu-request";
    case RunOutcome::Interrupted: return "interrupted";
    }
    return "?";
}

VirtualMachine::VirtualMachine(const KvmSystem& kvm, VmOptions opts)
    : opts_(std::move(opts)), group_([this] {
          // Blocked system calls return; the supervisor kicks every other vCPU.
          if (linux_) linux_->server().request_stop();
          if (threads_) threads_->wake();
      }) {
    check_ram_size(opts_);
    // Read the image before anything costly, so a bad path fails fast.
    const ImageFile file(opts_.guest_path);

    t0_ = std::chrono::steady_clock::now();
    vm_ = kvm.create_vm();

    std::unique_ptr<memmap::Backing> backing;
    try {
        backing = memmap::Backing::create(opts_.host_pages, opts_.ram_bytes, {});
    } catch (const memmap::HugePagePoolError& e) {
        if (!opts_.host_pages_chosen) throw;
        log_warn("guest RAM on 4 KiB host pages: %s", e.what());
        opts_.host_pages = memmap::PageSize::k4K;
        backing = memmap::Backing::create(opts_.host_pages, opts_.ram_bytes, {});
    }
    if (opts_.prefault) prefault_ns_ = backing->prefault();
    void* host = backing->data();
    memory_.add_region(memmap::GuestPhysAddr{0}, std::move(backing));
    vm_->set_user_memory_region(0, 0, opts_.ram_bytes, host);

    const bool linux_guest = linux_abi::classify_image(file) == linux_abi::ImageKind::Linux;
    if (!linux_guest) image_ = load_elf(file, memory_);

    if (!opts_.console)
        opts_.console = [](std::string_view line) {
            const std::string safe = escape_for_terminal(line); // no escape sequences reach the terminal
            std::printf("guest: %s\n", safe.c_str());
            std::fflush(stdout);
        };
    console_ = std::make_shared<DebugConsole>(memory_, opts_.console);
    marker_ = std::make_shared<BootMarker>(t0_);
    exit_ = std::make_shared<ExitDevice>();
    cpu_control_ = std::make_shared<CpuControl>();
    mmio_.claim(KVMGPU_CONSOLE_GPA, KVMGPU_CONSOLE_SIZE, console_);
    mmio_.claim(KVMGPU_MARKER_GPA, KVMGPU_MARKER_SIZE, marker_);
    mmio_.claim(KVMGPU_CPU_CONTROL_GPA, KVMGPU_CPU_CONTROL_SIZE, cpu_control_);
    pio_.claim(KVMGPU_EXIT_PORT, KVMGPU_EXIT_PORT_SIZE, exit_);

    vcpu_ = vm_->create_vcpu(0);
    // A Linux-ABI guest runs with XSAVE where KVM has it (guest_xstate.h).
    std::vector<kvm_cpuid_entry2> cpuid = kvm.supported_cpuid();
    if (linux_guest) {
        const bool kvm_xsave = kvm.check_extension(KVM_CAP_XSAVE) > 0 && kvm.check_extension(KVM_CAP_XCRS) > 0;
        opts_.linux.xstate = linux_abi::plan_guest_xstate(cpuid, linux_abi::host_xcr0(), kvm_xsave);
        cpuid = linux_abi::guest_cpuid(cpuid, opts_.linux.xstate);
        if (!opts_.linux.xstate.enabled() && kvm_xsave && !linux_abi::kvm_offers_xsave(cpuid))
            // This KVM's own choice (kvm-pvm makes it): one line, not a warning on every run.
            log_info("linux guest: runs without XSAVE (SSE state only): this KVM offers guests no XSAVE");
        else if (!opts_.linux.xstate.enabled())
            log_warn("linux guest: runs without XSAVE (AVX state not enabled): %s",
                     kvm_xsave ? "KVM's CPUID and the host kernel's XCR0 leave no XSAVE layout to use"
                               : "KVM lacks KVM_CAP_XSAVE or KVM_CAP_XCRS");
    }
    vcpu_->set_cpuid(cpuid);
    if (opts_.linux.xstate.enabled()) {
        try { // KVM checks XCR0 against the CPUID just given; a refusal leaves the guest without XSAVE
            vcpu_->set_xcr0(opts_.linux.xstate.xcr0);
        } catch (const KvmError& e) {
            log_warn("linux guest: runs without XSAVE (AVX state not enabled): %s", e.what());
            opts_.linux.xstate = {};
            cpuid = kvm.supported_cpuid();
            vcpu_->set_cpuid(cpuid);
        }
    }
    // Opened here: the seccomp filter of run() allows reading it, not opening it.
    execution_ = std::make_unique<ExecutionProbe>(KvmStatsReader(vcpu_->stats_fd(), "vcpu 0"));

    BootParams params;
    params.entry = image_.entry;
    params.image_end = image_.end;
    params.host_page_size = memmap::bytes(opts_.host_pages);
    params.tsc_khz = vcpu_->tsc_khz();
    params.seed = opts_.seed;
    params.nested = KvmSystem::host_is_virtualized();
    params.cmdline = opts_.cmdline;
    if (linux_guest) {
        opts_.linux.cpuid = cpuid;
        uint64_t hwcap = 0; // AT_HWCAP: CPUID.1:EDX, as Linux gives it
        for (const auto& e : cpuid)
            if (e.function == 1) hwcap = e.edx;
        // The file window's slots (file_window.h) come after RAM's (slot 0),
        // as many as KVM offers up to the fixed cap; read-only ones need
        // KVM_CAP_READONLY_MEM, without which file mappings are copied.
        const uint32_t window_slots = linux_abi::window_slot_cap(kvm.check_extension(KVM_CAP_NR_MEMSLOTS), 1);
        if (opts_.linux.file_window && kvm.check_extension(KVM_CAP_READONLY_MEM) > 0 && window_slots > 0) {
            opts_.linux.window_limits.first_slot = 1;
            opts_.linux.window_limits.max_slots = window_slots;
            opts_.linux.window_slots = [vm = vm_.get()](uint32_t slot, uint64_t gpa, uint64_t size, void* host,
                                                        bool read_only) {
                return vm->set_memory_slot(slot, gpa, size, host, read_only ? KVM_MEM_READONLY : 0);
            };
        }
        linux_ = std::make_unique<linux_abi::LinuxProcess>(
            file, memory_, opts_.guest_path, opts_.linux, params, hwcap,
            [console = console_](std::string_view text) { console->write_text(text); });
        const auto& li = linux_->image();
        image_ = LoadedImage{li.entry, li.lowest, li.end, 0};
        const int sync = kvm.check_extension(KVM_CAP_SYNC_REGS);
        constexpr int kNeeded = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
        linux_->prepare_vcpu(*vcpu_, opts_.linux.sync_regs && sync > 0 && (sync & kNeeded) == kNeeded);
        const int max_vcpus = kvm.check_extension(KVM_CAP_MAX_VCPUS);
        if (opts_.linux.max_threads < 1 || (max_vcpus > 0 && opts_.linux.max_threads > static_cast<uint32_t>(max_vcpus)))
            throw std::invalid_argument("--max-threads " + std::to_string(opts_.linux.max_threads) +
                                        " must be 1 to " + std::to_string(max_vcpus) + " (KVM's vCPUs per VM)");
        linux_->set_spawn([this](const linux_abi::ThreadStart& t, const kvm_regs& r, const kvm_sregs& s) {
            return threads_->spawn(t, r, s);
        });
    } else {
        write_boot_structures(memory_, params);
        vcpu_->set_sregs(long_mode_sregs(vcpu_->sregs()));
        vcpu_->set_regs(entry_regs(image_.entry));
        vcpu_->set_fpu(initial_fpu());
    }
    pio_.claim(KVMGPU_FAULT_PORT, KVMGPU_FAULT_PORT_SIZE, std::make_shared<FaultPort>(memory_, linux_.get()));
    if (linux_) pio_.claim(KVMGPU_LINUX_SYSCALL_PORT, 1, std::make_shared<linux_abi::SyscallPort>(*linux_));
    loop_ = std::make_unique<VcpuLoop>(
        VcpuLoop::Env{pio_, mmio_, memory_, group_, *exit_, *cpu_control_, *execution_, linux_.get()});
    if (linux_)
        threads_ = std::make_unique<GuestThreads>(GuestThreads::Env{
            *vm_, cpuid, *linux_, *loop_, group_, opts_.seccomp, opts_.linux.max_threads});
    setup_ns_ = ns_since(t0_) - prefault_ns_;
}

VirtualMachine::~VirtualMachine() {
    if (threads_) threads_->stop_and_join();
}

RunResult VirtualMachine::finish(GroupEnd end, const ExitCounts& exits) {
    console_->flush();
    RunResult r;
    r.outcome = end.outcome;
    r.exit_code = end.outcome == RunOutcome::GuestExit ? end.exit_code : exit_->code();
    if (linux_) {
        r.syscalls = linux_->server().report();
        if (const uint32_t n = threads_ ? threads_->threads_started() : 0) r.syscalls += "; " + std::to_string(n) + " more threads started";
    }
    r.detail = std::move(end.detail);
    r.register_dump = std::move(end.register_dump);
    try {
        r.final_regs = vcpu_->regs();
    } catch (const KvmError& e) {
        r.register_dump = e.what();
    }
    r.timings.setup_ns = setup_ns_;
    r.timings.prefault_ns = prefault_ns_;
    r.timings.first_instruction_ns = marker_->stage_ns(KVMGPU_MARKER_STAGE_ENTRY);
    r.timings.main_ns = marker_->stage_ns(KVMGPU_MARKER_STAGE_MAIN);
    r.exits = exits;
    r.execution = execution_->mode();
    return r;
}

void VirtualMachine::request_stop() {
    std::lock_guard lock(stop_mu_);
    stop_requested_ = true;
    if (running_watchdog_) running_watchdog_->interrupt();
}

RunResult VirtualMachine::run() {
    VcpuWatchdog watchdog(*vcpu_, opts_.timeout_s);
    {
        std::lock_guard lock(stop_mu_);
        running_watchdog_ = &watchdog;
        if (stop_requested_) watchdog.interrupt();
    }
    struct Unregister {
        VirtualMachine* vm;
        ~Unregister() {
            std::lock_guard lock(vm->stop_mu_);
            vm->running_watchdog_ = nullptr;
        }
    } unregister{this};
    group_.watch(watchdog, opts_.timeout_s);
    // The other threads' supervisor starts unconfined, like the watchdog; at
    // the end every thread is stopped before the result is read.
    if (threads_) threads_->start(*vcpu_);
    struct StopThreads {
        GuestThreads* threads;
        ~StopThreads() {
            if (threads) threads->stop_and_join();
        }
    } stop_threads{threads_.get()};
    // After the watchdog's thread exists (it stays unconfined), before any guest code runs.
    if (opts_.seccomp) confine_vcpu_thread(vcpu_->fd(), linux_ != nullptr, vm_->fd());
    const auto start = std::chrono::steady_clock::now();
    VcpuContext first(*vcpu_, 1);
    loop_->run(first);
    GroupEnd end = group_.settle(first);
    if (threads_) threads_->stop_and_join();
    RunResult r = finish(std::move(end), first.exits);
    r.timings.run_ns = ns_since(start);
    return r;
}

} // namespace kvmgpu
