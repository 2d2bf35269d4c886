// How one vGPU instance is configured by the VMM: doorbell mode, ring and
// resource limits. Use designated initialisers and leave the rest at their
// defaults, e.g. VgpuOptions{.doorbell = DoorbellMode::Poll, .poll_spin_us = 20}.
#pragma once

#include <cstdint>
#include <string_view>

#include "kvmtool-gpu/abi/vgpu_abi.h"

namespace kvmgpu::vgpu {

// How a guest's "new commands" signal reaches the ring's consumer (the
// GPU worker, or the VMM's executor inline). Every mode but Poll sleeps on
// the kick eventfd once idle, publishing the ring's event index so the
// guest kicks only then (vgpu_abi.h).
enum class DoorbellMode : uint32_t {
    Trap = VGPU_DOORBELL_TRAP,           // MMIO exit; the vCPU thread writes the kick eventfd
    Ioeventfd = VGPU_DOORBELL_IOEVENTFD, // KVM writes the kick eventfd; no exit to the VMM
    Poll = VGPU_DOORBELL_POLL,           // the consumer watches ring->producer; no kicks
    Adaptive = VGPU_DOORBELL_ADAPTIVE,   // ioeventfd, polling for an adaptive window before each sleep
};
const char* to_string(DoorbellMode m);
// "adaptive", "trap", "ioeventfd", "poll"; false for anything else.
bool parse_doorbell(std::string_view s, DoorbellMode* out);
// KVM_IOEVENTFD carries the guest's doorbell write to the kick eventfd.
inline bool uses_ioeventfd(DoorbellMode m) { return m == DoorbellMode::Ioeventfd || m == DoorbellMode::Adaptive; }

// A device-memory quota no GPU reaches: the VM may hold what the GPU has.
inline constexpr uint64_t kWholeDeviceQuota = ~0ull;

// Limits are per VM; every one bounds something a guest can ask for.
struct VgpuOptions {
    DoorbellMode doorbell = DoorbellMode::Adaptive;
    uint32_t max_ring = VGPU_DEFAULT_MAX_RING;   // largest RING_SIZE accepted (power of two)
    uint64_t device_mem_quota = 4ull << 30;      // bytes of device memory this VM may hold
    uint32_t max_handles = 65536;                // per table: modules, functions, streams, events, allocations (cuDNN makes thousands of functions)
    uint32_t max_graph_nodes = 65536;            // graph nodes a VM holds at once (graphs, execs, captures)
    uint64_t max_module_bytes = 64ull << 20;     // largest module image copied out of guest RAM
    uint32_t poll_spin_us = 50;                  // Poll: spin this long after the last command ...
    uint32_t poll_sleep_us = 200;                // ... then sleep this long between looks
    uint32_t poll_max_us = 20'000;               // Adaptive: the cap of its polling window (poll_window.h)
    uint32_t log_per_second = 10;                // rate limit for guest-error log lines
    // Guest RAM registered with the GPU as commands first reach each part
    // (lazy_registration.h), or all of it when the vGPU starts.
    bool lazy_ram_registration = true;
    // Registered guest buffers (cuMemHostRegister): how many at once, their
    // bytes together (0: the VM's guest RAM size), and the host mappings
    // their aliases may take (fewer when this process's budget is smaller:
    // alias_budget.h; 262,144 holds a 1 GiB buffer of scattered 4 KiB frames).
    uint32_t max_registrations = 1024;
    uint64_t max_registered_bytes = 0;
    uint64_t max_alias_mappings = 262144;
    // A GPU worker process confines itself once its backend has started
    // (devices/vgpu_worker/worker_sandbox.h); --worker-sandbox on|off, on
    // by default from the command line (its allowlist measured on the H100,
    // docs/security.md). Off here, for the test rigs that build options
    // themselves (KVMGPU_TEST_WORKER_SANDBOX=on turns theirs on).
    bool worker_sandbox = false;
};

// Largest max_ring the device accepts (the ring is then ~35 MiB of guest RAM).
inline constexpr uint32_t kMaxRingLimit = 1u << 16;

// Throws std::invalid_argument naming the first bad field.
void validate(const VgpuOptions& o);

} // namespace kvmgpu::vgpu
