#include "kvmtool-gpu/vmm/vcpu_loop.h"

#include <cstdio>

#include "kvmtool-gpu/kvm/kvm_error.h"
#include "kvmtool-gpu/vmm/guest_fault.h"

namespace kvmgpu {

namespace {
template <class... Ts>
struct Overloaded : Ts... {
    using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;
} // namespace

void VcpuLoop::run(VcpuContext& ctx) const {
    while (!env_.group.over(ctx)) {
        try {
            VcpuExit ex = ctx.vcpu().run();
            ++ctx.exits.total;
            handle(ctx, ex);
        } catch (const KvmError& e) { // the VMM's own ioctls failing, never the guest's doing
            ctx.end(RunOutcome::Unexpected, e.what());
        }
        if (ctx.done()) {
            if (auto end = ctx.take_end()) env_.group.end(std::move(*end));
            return;
        }
    }
}

void VcpuLoop::handle(VcpuContext& ctx, VcpuExit& ex) const {
    std::visit(Overloaded{
                   [&](exit::PortIo& io) { port_io(ctx, io); },
                   [&](exit::Mmio& m) { mmio(ctx, m); },
                   [&](exit::Interrupted&) { ++ctx.exits.interrupted; }, // the loop's head sees why
                   [&](exit::Halt&) { ctx.end(RunOutcome::Halted, "guest halted without writing the exit port"); },
                   [&](exit::Shutdown&) { ctx.end(RunOutcome::TripleFault, describe_shutdown(ctx)); },
                   [&](exit::FailEntry& f) {
                       char line[96];
                       std::snprintf(line, sizeof line, "KVM_EXIT_FAIL_ENTRY, hardware reason 0x%llx",
                                     static_cast<unsigned long long>(f.reason));
                       ctx.end(RunOutcome::EntryFailed, line);
                   },
                   [&](exit::InternalError& e) {
                       ctx.end(RunOutcome::InternalError, "KVM_EXIT_INTERNAL_ERROR, suberror " + std::to_string(e.suberror));
                   },
                   [&](exit::SystemEvent& s) {
                       ctx.end(RunOutcome::Unexpected, "KVM_EXIT_SYSTEM_EVENT type " + std::to_string(s.type));
                   },
                   [&](exit::Other& o) {
                       ctx.end(RunOutcome::Unexpected, "unexpected exit reason " + std::to_string(o.reason));
                   },
               },
               ex);
}

void VcpuLoop::port_io(VcpuContext& ctx, exit::PortIo& io) const {
    ++ctx.exits.pio;
    if (env_.linux)
        if (std::string refused = env_.linux->port_refusal(ctx.vcpu(), io.port, io.in); !refused.empty()) {
            ctx.end(RunOutcome::GuestFault, std::move(refused));
            return;
        }
    for (uint32_t i = 0; i < io.count && !ctx.done(); ++i) {
        auto chunk = io.data.subspan(uint64_t{i} * io.size, io.size);
        if (io.in) env_.pio.read(io.port, chunk, &ctx);
        else env_.pio.write(io.port, chunk, &ctx);
    }
    if (env_.exit_port.requested())
        ctx.end(RunOutcome::GuestExit, "guest exited with code " + std::to_string(env_.exit_port.code()),
                env_.exit_port.code());
}

void VcpuLoop::mmio(VcpuContext& ctx, exit::Mmio& m) const {
    ++ctx.exits.mmio;
    if (env_.linux)
        if (auto in_window = env_.linux->window_exit(ctx.vcpu(), ctx.tid(), m.addr, m.data, m.write)) {
            if (!in_window->empty()) ctx.end(RunOutcome::GuestFault, std::move(*in_window));
            return;
        }
    if (m.write) env_.mmio.write(m.addr, m.data, &ctx);
    else env_.mmio.read(m.addr, m.data, &ctx);
    if (auto request = env_.cpu_control.take()) // this thread's own
        if (std::string refused = serve(ctx, *request); !refused.empty())
            ctx.end(RunOutcome::BadRequest, std::move(refused));
}

std::string VcpuLoop::serve(VcpuContext& ctx, const CpuRequest& request) const {
    if (request.kind != CpuRequest::Kind::LoadCr3 && !ctx.first())
        return "guest asked for the calibration window from a thread other than the first (it counts the first "
               "thread's vCPU)";
    switch (request.kind) {
    case CpuRequest::Kind::CalibrateBegin: env_.execution.begin(request.value); return "";
    case CpuRequest::Kind::CalibrateEnd: env_.execution.end(); return "";
    case CpuRequest::Kind::LoadCr3: return load_cr3(ctx.vcpu(), request.value);
    }
    return "";
}

std::string VcpuLoop::load_cr3(VcpuFd& vcpu, uint64_t root) const {
    const uint64_t ram = env_.memory.total_bytes();
    if ((root & 0xfff) != 0 || root >= ram || ram - root < 0x1000) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "guest asked to load CR3 = 0x%llx, which is not a 4 KiB-aligned page inside its RAM",
                      static_cast<unsigned long long>(root));
        return buf;
    }
    try {
        // KVM finishes an MMIO exit on the next KVM_RUN; immediate_exit makes
        // that run return right after, so the registers are consistent to edit.
        vcpu.request_immediate_exit();
        if (!std::holds_alternative<exit::Interrupted>(vcpu.run()))
            return "unexpected exit while completing a CR3 load";
        kvm_sregs s = vcpu.sregs();
        // KVM rebuilds its shadow of the guest's tables only when CR3 changes,
        // and the guest also asks for this after editing present entries: flip
        // PWT (write-through for the walk of the top table only) so it always does.
        constexpr uint64_t kPwt = 1ull << 3;
        s.cr3 = root | ((s.cr3 & kPwt) ? 0 : kPwt);
        vcpu.set_sregs(s);
    } catch (const KvmError& e) {
        return std::string("CR3 load failed: ") + e.what();
    }
    return "";
}

std::string VcpuLoop::describe_shutdown(VcpuContext& ctx) const {
    std::string why = "guest fault (KVM_EXIT_SHUTDOWN), registers unreadable";
    try {
        why = describe_guest_fault(env_.memory, ctx.vcpu().regs(), ctx.vcpu().sregs());
    } catch (const KvmError&) {
    }
    if (!ctx.last_call.empty()) why += "; last system call on this thread: " + ctx.last_call;
    return why;
}

} // namespace kvmgpu
