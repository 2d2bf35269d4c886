// The CUDA virtual memory management calls as the device model asks a
// backend for them (GpuBackend::virtual_memory(); null: not offered):
// cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess and their
// undoing. Every size, alignment and range is already checked against the
// VM's reservations, handles and mappings.
#pragma once

#include <cstdint>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

class VirtualMemoryBackend {
public:
    virtual ~VirtualMemoryBackend() = default;

    // The allocation granularity (a power of two) of the backend's device.
    virtual Status vmm_granularity(uint64_t* out) = 0;
    // `fixed` is an address asked for (0: any), which the backend may not
    // give (the driver treats it as a hint too).
    virtual Status vmm_reserve(uint64_t bytes, uint64_t align, uint64_t fixed, uint64_t* va) = 0;
    virtual Status vmm_free_reservation(uint64_t va, uint64_t bytes) = 0;
    // A physical handle is the backend's; its memory stays while mapped
    // after vmm_release. *compressible: asked for, then what was granted.
    virtual Status vmm_create(uint64_t bytes, bool* compressible, uint64_t* handle) = 0;
    virtual Status vmm_release(uint64_t handle) = 0;
    virtual Status vmm_map(uint64_t va, uint64_t bytes, uint64_t handle) = 0;
    virtual Status vmm_unmap(uint64_t va, uint64_t bytes) = 0;
    // flags: VGPU_VMM_ACCESS_* for this device.
    virtual Status vmm_set_access(uint64_t va, uint64_t bytes, uint32_t flags) = 0;
};

} // namespace kvmgpu::vgpu
