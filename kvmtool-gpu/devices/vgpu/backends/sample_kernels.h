// CPU reference kernels for the runtime-API samples (guest-stub/samples/),
// so they run on the host backend too. Same contract as host_kernels.h:
// pointer parameters are device addresses reached only through the
// DeviceAddressSpace, each honours its launch geometry as its CUDA twin
// does (threads past n do nothing), and a range outside every allocation is
// VGPU_ERROR_ILLEGAL_ADDRESS.
//   vectorAdd(const float* A, const float* B, float* C, int n)
//       1-D over x: C[i] = A[i] + B[i]
//   matrixMulTiled<32>(float* C, const float* A, const float* B, int wA, int wB)
//       2-D: C[r*wB + c] = sum_k A[r*wA + k] * B[k*wB + c] for rows from y,
//       columns from x (float accumulation in k order, no FMA)
//   reduceSum(const int* in, int* out, unsigned n)
//       block b writes out[b] = the sum (wrapping, as int on a GPU) of
//       in[b*2*blockDim.x, (b+1)*2*blockDim.x) clipped to n
//   saxpy(int n, float a, const float* x, float* y): y[i] = a*x[i] + y[i]
//   incrementBy(int* data, int inc, int n): data[i] += inc (wrapping)
#pragma once

#include <span>

#include "kvmtool-gpu/devices/vgpu/backends/host_kernels.h"

namespace kvmgpu::vgpu::sample_kernels {

Status vector_add_int(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p);
Status matrix_mul_tiled(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p);
Status reduce_sum(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p);
Status saxpy(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p);
Status increment_by(const DeviceAddressSpace& mem, Dim3 grid, Dim3 block, std::span<void* const> p);

} // namespace kvmgpu::vgpu::sample_kernels
