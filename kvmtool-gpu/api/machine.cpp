// kvmgpu::Machine (include/kvmgpu/kvmgpu.hpp) over VirtualMachine and
// attach_vgpu: the VM is built by the constructor, run once, and torn down
// (vGPU first, then the VM) by the destructor.
#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

#include "kvmgpu/kvmgpu.hpp"
#include "kvmtool-gpu/api/machine_config.h"
#include "kvmtool-gpu/abi/vgpu_ops.h"
#include "kvmtool-gpu/api/process_setup.h"
#include "kvmtool-gpu/kvm/kvm_flavor.h"

namespace kvmgpu {

const char* to_string(Outcome o) { return kvmgpu::to_string(static_cast<RunOutcome>(o)); }

// Same order as RunOutcome (run_result.h): to_string and the C API rely on it.
static_assert(static_cast<int>(Outcome::Interrupted) == static_cast<int>(RunOutcome::Interrupted) &&
              static_cast<int>(Outcome::BadRequest) == static_cast<int>(RunOutcome::BadRequest) &&
              static_cast<int>(Outcome::GuestFault) == static_cast<int>(RunOutcome::GuestFault));

struct Machine::Impl {
    api::CheckedConfig config;
    std::shared_ptr<const KvmSystem> kvm; // outlives the VM
    std::unique_ptr<VirtualMachine> vm;
    std::optional<AttachedVgpu> vgpu;     // destroyed before the VM
    std::mutex mu;                        // guards what follows
    bool ran = false;
    std::thread runner;
    RunResult result;
    std::exception_ptr failed;

    // The run on the calling thread; an exception (the seccomp filter that
    // could not be installed) is kept for whoever collects the result.
    void run_here() {
        try {
            result = vm->run();
        } catch (...) {
            failed = std::current_exception();
        }
    }
    void claim_run() {
        std::lock_guard lock(mu);
        if (ran) throw Error("a Machine runs once: create another for the next run");
        ran = true;
    }
    Result collect();
};

namespace {

Result to_result(const RunResult& r) {
    Result out;
    out.outcome = static_cast<Outcome>(r.outcome);
    out.exit_code = r.exit_code;
    out.detail = r.detail;
    out.register_dump = r.register_dump;
    out.timings = {r.timings.setup_ns, r.timings.first_instruction_ns, r.timings.main_ns, r.timings.run_ns,
                   r.timings.prefault_ns};
    out.mmio_exits = r.exits.mmio;
    out.pio_exits = r.exits.pio;
    out.exits = r.exits.total;
    out.guest_code = r.execution.describe();
    out.syscalls = r.syscalls;
    return out;
}

} // namespace

Result Machine::Impl::collect() {
    if (failed) {
        try {
            std::rethrow_exception(failed);
        } catch (const std::exception& e) {
            throw Error(e.what());
        }
    }
    return to_result(result);
}

Machine::Machine(VmConfig config) : impl_(std::make_unique<Impl>()) {
    impl_->config = api::check_config(std::move(config));
    try {
        impl_->kvm = api::shared_kvm();
        impl_->vm = std::make_unique<VirtualMachine>(*impl_->kvm, impl_->config.options);
        if (impl_->config.vgpu) impl_->vgpu = attach_vgpu(*impl_->vm, *impl_->config.vgpu);
    } catch (const std::exception& e) {
        throw Error(e.what());
    }
}

Machine::~Machine() {
    if (!impl_->runner.joinable()) return;
    impl_->vm->request_stop();
    impl_->runner.join();
}

Result Machine::run() {
    impl_->claim_run();
    if (!impl_->config.options.seccomp) {
        impl_->run_here();
        return impl_->collect();
    }
    // The filter is irreversible for its thread: never the caller's.
    std::thread vcpu([this] { impl_->run_here(); });
    vcpu.join();
    return impl_->collect();
}

void Machine::start() {
    impl_->claim_run();
    impl_->runner = std::thread([this] { impl_->run_here(); });
}

Result Machine::wait() {
    if (!impl_->runner.joinable()) throw Error("wait() without a start()");
    impl_->runner.join();
    return impl_->collect();
}

void Machine::stop() { impl_->vm->request_stop(); }

MachineSummary Machine::info() const {
    const VmOptions& o = impl_->config.options;
    MachineSummary s;
    s.kvm = detect_kvm_flavor().describe();
    s.guest_path = o.guest_path;
    s.ram_bytes = o.ram_bytes;
    s.host_pages = memmap::to_string(impl_->vm->options().host_pages); // what guest RAM got (auto may fall back)
    s.cwd = o.linux.cwd;
    s.libcuda = impl_->config.libcuda;
    s.notes = impl_->config.notes;
    if (impl_->vgpu) {
        const AttachedVgpu& v = *impl_->vgpu;
        s.vgpu_ready = v.device->ready();
        // The factory's note names the backend and, on a fall-back, why.
        s.vgpu_backend = v.backend_note.empty() && s.vgpu_ready ? v.device->backend_description() : v.backend_note;
    }
    return s;
}

VgpuCounters Machine::vgpu_counters() const {
    VgpuCounters out;
    if (!impl_->vgpu) return out;
    const auto c = impl_->vgpu->device->counters();
    out.commands = c.commands;
    out.errors = c.errors;
    out.bytes_htod = c.bytes_htod;
    out.bytes_dtoh = c.bytes_dtoh;
    out.bytes_dtod = c.bytes_dtod;
    out.kicks = c.kicks;
    out.wakeups = c.wakeups;
    out.recoveries = c.recoveries;
    out.ram_registered_bytes = c.ram_registered_bytes;
    out.ram_register_ns = c.ram_register_ns;
    for (size_t op = 0; op < c.waited_per_opcode.size(); ++op) {
        if (c.waited_per_opcode[op] == 0) continue;
        const char* name = vgpu_op_name(static_cast<unsigned>(op));
        out.waited += c.waited_per_opcode[op];
        out.waited_by_command.emplace_back(name ? name : "op " + std::to_string(op), c.waited_per_opcode[op]);
    }
    std::stable_sort(out.waited_by_command.begin(), out.waited_by_command.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
}

VgpuStatus Machine::vgpu_status() const {
    if (!impl_->vgpu) throw Error("vgpu_status(): this Machine has no vGPU");
    const auto& d = *impl_->vgpu->device;
    VgpuStatus s;
    s.backend = d.backend_description();
    s.ram_registered = d.registration_status() == VGPU_SUCCESS;
    s.registration_ns = d.registration_ns();
    s.ready_after_ns = d.ready_after_ns();
    return s;
}

} // namespace kvmgpu
