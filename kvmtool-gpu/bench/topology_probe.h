// Measures a GpuTopology (gpu_topology.h) for the GPUs a VM's devices sit
// on: the CUDA driver's peer attributes per pair of distinct GPUs and, where
// NVML loads, the NVLink links between them. It runs in a forked child
// (native_child.h), so this process never initialises CUDA.
#pragma once

#include <vector>

#include "kvmtool-gpu/bench/gpu_topology.h"
#include "kvmtool-gpu/devices/vgpu/backend_factory.h"

namespace kvmgpu::bench {

// With BackendChoice::Host: the host backend's topology, nothing probed.
// With Auto and no usable CUDA driver: the host backend's, saying why.
// With Cuda and no driver: no pairs, `why` says so.
GpuTopology probe_topology(const std::vector<int>& gpus, vgpu::BackendChoice backend);

} // namespace kvmgpu::bench
