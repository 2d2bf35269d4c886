// The host backend's stand-ins for GPU kernels: a small table of CPU
// reference kernels, found by name like cuModuleGetFunction finds a kernel.
// They read their pointer parameters as device addresses and reach memory
// only through a DeviceAddressSpace, so a bad pointer fails like a faulting
// GPU kernel (VGPU_ERROR_ILLEGAL_ADDRESS) instead of touching host memory.
//
// Each honours its launch geometry as its CUDA twin does: thread
// (blockIdx * blockDim + threadIdx) handles one element, threads past n do
// nothing, elements no thread covers stay untouched.
//   vector_add(const float* a, const float* b, float* c, unsigned n)
//       1-D over x: c[i] = a[i] + b[i]
//   matmul(const float* a, const float* b, float* c, unsigned n)
//       2-D, square, row-major: row from y, column from x; c = a * b
//   empty_kernel()
//   param_echo(uint8_t* out, char, {float x3}, aligned(16) {double x2},
//              {uint64_t x65}, short): one thread writes the by-value
//       parameters to out back to back (kvmtool-gpu/abi/param_echo_shapes.h)
// and the runtime-API samples' kernels (sample_kernels.h): vectorAdd,
// matrixMulTiled<32>, reduceSum, saxpy, incrementBy.
// Names are accepted plain (extern "C") or Itanium-mangled.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/gpu_backend.h"

namespace kvmgpu::vgpu {

// Checked device-address -> host translation the kernels go through.
class DeviceAddressSpace {
public:
    virtual ~DeviceAddressSpace() = default;
    // Host view of [dptr, dptr + bytes) if it lies inside one allocation or
    // one guest-RAM window; nullptr otherwise.
    virtual uint8_t* translate(uint64_t dptr, uint64_t bytes) const = 0;
};

using CpuKernelFn = Status (*)(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> params);

struct CpuKernel {
    std::string_view name;
    std::string_view mangled;
    std::span<const uint16_t> param_sizes; // what the launch must pass
    CpuKernelFn fn;
    // Where the C ABI puts each parameter, as nvcc's module would say;
    // empty: each at its size's natural alignment (scalars and pointers).
    std::span<const uint16_t> param_offsets = {};
};

// The table; a BackendFunction of the host backend is an index into it + 1.
std::span<const CpuKernel> cpu_kernels();
// Index into cpu_kernels(), or -1 when no kernel has that name.
int find_cpu_kernel(std::string_view name);
// The indices of the kernels whose name (or mangled name) `image` holds as
// a whole symbol (a string table's entry, a PTX .entry's name).
std::vector<int> kernels_named_in(std::span<const uint8_t> image);
// A kernel's parameters as its module would give them.
ParamLayout cpu_kernel_layout(const CpuKernel& k);

} // namespace kvmgpu::vgpu
