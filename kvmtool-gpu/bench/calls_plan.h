// The sweep of `kvmtool-gpu bench calls`: one VM per doorbell (adaptive,
// trap, ioeventfd, poll), each running the calls guest with batching (deferred
// submission) off and on; the metrics each owes; the native measurements.
// Pure: no KVM, no GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>
#include <tuple>

#include "kvmtool-gpu/devices/vgpu/vgpu_options.h"

namespace kvmgpu::bench {

// The guest's metrics, in its order (guest-stub/programs/calls.cpp).
inline const std::vector<std::string>& call_metrics() {
    static const std::vector<std::string> m = {"launch",         "loop",           "sync_launch",
                                               "sync_copy_htod", "sync_copy_dtoh", "wake_launch",
                                               "graph_launch",   "alloc_async",    "managed_launch"};
    return m;
}
// launch, loop and graph_launch are asynchronous calls (n each; a graph
// launch runs kGraphChain empty kernels captured once); the rest round trips
// (iters; wake_launch: wakes, each after a pause of pause_ms).
inline constexpr unsigned kGraphChain = 8;
// alloc_async: iters x (cuMemAllocAsync of this many bytes, cuMemFreeAsync,
// cuStreamSynchronize), a round trip of the stream-ordered allocator.
inline constexpr uint64_t kAllocAsyncBytes = 1 << 20;
// managed_launch: iters x (launch + synchronize) while the context holds
// this much managed memory (written by the CPU first).
inline constexpr uint64_t kManagedLaunchBytes = 16 << 20;
bool is_async_metric(const std::string& metric);

struct CallsSweep {
    std::vector<vgpu::DoorbellMode> doorbells = {vgpu::DoorbellMode::Adaptive, vgpu::DoorbellMode::Trap,
                                                 vgpu::DoorbellMode::Ioeventfd, vgpu::DoorbellMode::Poll};
    bool batching_off = true, batching_on = true;
    uint64_t n = 1000;       // asynchronous calls per run
    uint64_t iters = 200;    // round trips per run
    uint64_t copy_bytes = 8;
    uint64_t reps = 5;       // runs per measurement (min, median, p90 reported), after a warm-up run
    uint64_t wakes = 20;     // wake_launch round trips per run ...
    uint64_t pause_ms = 10;  // ... each after this pause
    uint64_t idle_s = 10;    // then the guest idles this long: the VMM's and the worker's CPU is measured
    // Calls per run of `metric`.
    uint64_t calls_of(const std::string& metric) const;
};
CallsSweep quick_calls_sweep(); // n 100, iters 20, reps 1, wakes 3, idle 1 s

struct CallsKey {
    std::string source;   // "native" or "guest"
    std::string doorbell; // "adaptive", "trap", "ioeventfd", "poll"; "-" native
    std::string batching; // "off", "on"; "-" native
    std::string metric;
    bool operator==(const CallsKey&) const = default;
    auto wire() { return std::tie(source, doorbell, batching, metric); }
    std::string mode() const; // "guest poll batching on", "native"
};

struct CallsVm {
    vgpu::DoorbellMode doorbell;
    std::string cmdline;
    std::vector<CallsKey> expected;
};
std::vector<CallsVm> plan_calls_vms(const CallsSweep& s);
std::vector<CallsKey> plan_native_calls();

} // namespace kvmgpu::bench
