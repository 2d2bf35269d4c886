#include "kvmtool-gpu/bench/guest_bench_run.h"

#include "kvmtool-gpu/devices/terminal_text.h"

namespace kvmgpu::bench {

namespace {
constexpr size_t kTailLines = 12;
}

GuestBenchOutcome run_guest_bench(const KvmSystem& kvm, VmOptions vm, const VgpuConfig& vgpu,
                                  const std::vector<std::string_view>& tags,
                                  const std::function<void(const BenchLine&)>& on_line) {
    GuestBenchOutcome out;
    // The console calls the sink from the vCPU thread, which is this one.
    vm.console = [&](std::string_view line) {
        if (auto l = parse_bench_line(line, tags)) {
            if (on_line) on_line(*l);
            out.lines.push_back(std::move(*l));
            return;
        }
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
        out.tail.emplace_back(line);
        if (out.tail.size() > kTailLines) out.tail.pop_front();
    };
    VirtualMachine machine(kvm, std::move(vm));
    AttachedVgpu attached = attach_vgpu(machine, vgpu);
    out.backend_note = attached.backend_note;
    out.result = machine.run();
    // After the run: a GPU worker starts its backend while the guest runs.
    out.backend = attached.device->backend_description();
    out.zero_copy = attached.device->registration_status() == VGPU_SUCCESS;
    out.registration_ms = static_cast<double>(attached.device->registration_ns()) * 1e-6;
    out.counters = attached.device->counters();
    attached.device->stop();
    return out;
}

std::string run_guest_bench_checked(const KvmSystem& kvm, VmOptions vm, const VgpuConfig& vgpu,
                                    const std::vector<std::string_view>& tags,
                                    const std::function<void(const BenchLine&)>& on_line, GuestBenchOutcome* out) {
    try {
        validate_options(vm);
        *out = run_guest_bench(kvm, std::move(vm), vgpu, tags, on_line);
        return out->result.passed() ? std::string() : describe_failure(*out);
    } catch (const std::exception& e) {
        return e.what();
    }
}

std::string describe_failure(const GuestBenchOutcome& o) {
    std::string s = std::string(to_string(o.result.outcome)) + ", exit code " + std::to_string(o.result.exit_code);
    if (!o.result.detail.empty()) s += " (" + o.result.detail + ")";
    if (!o.tail.empty()) {
        s += "; console tail:";
        for (const auto& l : o.tail) s += "\n    " + escape_for_terminal(l);
    }
    return s;
}

} // namespace kvmgpu::bench
