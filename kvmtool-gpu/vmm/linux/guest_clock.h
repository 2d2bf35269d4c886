// The clocks a Linux-ABI guest reads through the vDSO (vdso/vdso.c): lines
// over the guest's TSC whose parameters the VMM keeps in struct kvmgpu_vvar.
// The first line comes from KVM's TSC rate; each later one (follow(), about
// once a second, at an exit) takes the rate measured since the first
// reading and is continuous with the line before: a guest behind the host's
// CLOCK_MONOTONIC steps forward to it, one ahead is slowed (at most
// kMaxSlewNs a second), so the guest's monotonic clock never steps back.
// Pure arithmetic on readings the caller takes, so tests need no clock.
#pragma once

#include <cstdint>
#include <optional>

#include "kvmtool-gpu/abi/linux_abi.h"

namespace kvmgpu::linux_abi {

// The host's clocks at one host TSC value.
struct HostClocks {
    uint64_t tsc;
    int64_t mono_ns, real_ns, boot_ns, raw_ns;
};
HostClocks read_host_clocks();

class GuestClock {
public:
    static constexpr int64_t kMaxSlewNs = 500'000; // per second of guest time

    // `tsc_khz`: the guest TSC's rate (KVM_GET_TSC_KHZ, > 0); `tsc_offset`:
    // guest TSC minus host TSC.
    GuestClock(uint64_t tsc_khz, int64_t tsc_offset, const HostClocks& first);

    // The page as it stands (seq is the caller's).
    kvmgpu_vvar page() const { return page_; }
    // A new line from a later reading.
    void follow(const HostClocks& now);
    // At least a second since the last line began (guest TSC ticks).
    bool due(uint64_t host_tsc) const;
    // The guest's CLOCK_MONOTONIC at a host TSC value, as the vDSO computes it.
    int64_t mono_at(uint64_t host_tsc) const;

private:
    uint64_t guest_tsc(uint64_t host_tsc) const { return host_tsc + static_cast<uint64_t>(offset_); }

    int64_t offset_;
    uint64_t ticks_per_s_;
    HostClocks first_;
    kvmgpu_vvar page_{};
};

} // namespace kvmgpu::linux_abi
