// The host backend's CPU libraries as their own types, for tests that count
// what a VM left in them.
#pragma once

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"
#include "kvmtool-gpu/devices/vgpu/blas/host_blas.h"
#include "kvmtool-gpu/devices/vgpu/fft/host_fft.h"
#include "kvmtool-gpu/devices/vgpu/rand/host_rand.h"

namespace kvmgpu::vgpu::test {

inline const HostBlas& host_blas_of(GpuBackend& b) { return dynamic_cast<const HostBlas&>(*b.blas()); }
inline const HostRand& host_rand_of(GpuBackend& b) { return dynamic_cast<const HostRand&>(*b.rand()); }
inline const HostFft& host_fft_of(GpuBackend& b) { return dynamic_cast<const HostFft&>(*b.fft()); }

} // namespace kvmgpu::vgpu::test
