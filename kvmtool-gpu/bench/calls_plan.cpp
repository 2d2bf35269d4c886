#include "kvmtool-gpu/bench/calls_plan.h"

namespace kvmgpu::bench {

bool is_async_metric(const std::string& metric) {
    return metric == "launch" || metric == "loop" || metric == "graph_launch";
}

CallsSweep quick_calls_sweep() {
    CallsSweep s;
    s.n = 100;
    s.iters = 20;
    s.reps = 1;
    s.wakes = 3;
    s.idle_s = 1;
    return s;
}

uint64_t CallsSweep::calls_of(const std::string& metric) const {
    return is_async_metric(metric) ? n : metric == "wake_launch" ? wakes : iters;
}

std::string CallsKey::mode() const {
    return source == "native" ? "native" : "guest " + doorbell + " batching " + batching;
}

std::vector<CallsVm> plan_calls_vms(const CallsSweep& s) {
    std::vector<CallsVm> out;
    std::vector<std::string> batching;
    if (s.batching_off) batching.emplace_back("off");
    if (s.batching_on) batching.emplace_back("on");
    if (batching.empty()) return out;
    for (vgpu::DoorbellMode d : s.doorbells) {
        CallsVm vm;
        vm.doorbell = d;
        vm.cmdline = "n=" + std::to_string(s.n) + " iters=" + std::to_string(s.iters) +
                     " copy_bytes=" + std::to_string(s.copy_bytes) + " reps=" + std::to_string(s.reps) + " batching=" +
                     (batching.size() == 2 ? "off,on" : batching[0]) + " wakes=" + std::to_string(s.wakes) +
                     " pause_ms=" + std::to_string(s.pause_ms) + " idle_s=" + std::to_string(s.idle_s);
        for (const auto& b : batching)
            for (const auto& m : call_metrics()) vm.expected.push_back({"guest", vgpu::to_string(d), b, m});
        out.push_back(std::move(vm));
    }
    return out;
}

std::vector<CallsKey> plan_native_calls() {
    std::vector<CallsKey> out;
    for (const auto& m : call_metrics()) out.push_back({"native", "-", "-", m});
    return out;
}

} // namespace kvmgpu::bench
