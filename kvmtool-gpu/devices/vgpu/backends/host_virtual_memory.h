// The host backend's virtual memory management: physical blocks of host
// memory mapped at reserved addresses, so its CPU kernels and copies reach
// them through HostBackend::translate(). Reservations are the backend's
// fake addresses, or the address asked for where it overlaps nothing of the
// backend's; the granule is 2 MiB, as an H100's. The device model checked
// every range and handle; the checks here only keep these maps consistent.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "kvmtool-gpu/devices/vgpu/backends/host_device_memory.h"
#include "kvmtool-gpu/devices/vgpu/backends/virtual_memory_backend.h"

namespace kvmgpu::vgpu {

class HostVirtualMemory final : public VirtualMemoryBackend {
public:
    static constexpr uint64_t kGranule = 2ull << 20;
    // `memory`: the device's address range, budget, object numbers and
    // what a reservation must not overlap; it outlives this.
    explicit HostVirtualMemory(HostDeviceMemory& memory) : memory_(memory) {}
    HostVirtualMemory(const HostVirtualMemory&) = delete;
    HostVirtualMemory& operator=(const HostVirtualMemory&) = delete;

    Status vmm_granularity(uint64_t* out) override;
    Status vmm_reserve(uint64_t bytes, uint64_t align, uint64_t fixed, uint64_t* va) override;
    Status vmm_free_reservation(uint64_t va, uint64_t bytes) override;
    Status vmm_create(uint64_t bytes, bool* compressible, uint64_t* handle) override; // never compressible
    Status vmm_release(uint64_t handle) override;
    Status vmm_map(uint64_t va, uint64_t bytes, uint64_t handle) override;
    Status vmm_unmap(uint64_t va, uint64_t bytes) override;
    Status vmm_set_access(uint64_t va, uint64_t bytes, uint32_t flags) override;

    // [dptr, dptr + bytes) inside one mapping: its host bytes, else nullptr.
    uint8_t* translate(uint64_t dptr, uint64_t bytes) const;
    // Everything goes (a recovered context), the fake ranges given back.
    void clear();

private:
    bool reservation_overlaps(uint64_t va, uint64_t bytes) const;

    HostDeviceMemory& memory_;
    struct Reservation {
        uint64_t bytes;
        uint64_t fake_base; // what the device's address range gave (0: the address asked for)
    };
    std::map<uint64_t, Reservation> reserved_; // by start
    struct Block {
        std::shared_ptr<uint8_t[]> memory;
        uint64_t bytes;
    };
    std::map<uint64_t, Block> blocks_; // by handle
    std::map<uint64_t, Block> maps_;   // by start: a mapping keeps a released block alive
};

} // namespace kvmgpu::vgpu
