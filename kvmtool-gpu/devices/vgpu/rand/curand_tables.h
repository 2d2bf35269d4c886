// cuRAND's Sobol tables (direction vectors and scramble constants), read
// from the host's libcurand: pure host data, no GPU needed, so both
// backends have them where the library is installed. The device model
// copies one into a guest's device memory (VGPU_OP_RAND_GET_TABLE, for
// curandGetDirectionVectors32 and friends) and the host backend's Sobol
// generator computes from them.
#pragma once

#include <cstdint>
#include <span>

namespace kvmgpu::vgpu {

// Bytes of table `id` (VGPU_RAND_TABLE_*, or a curandDirectionVectorSet_t
// 101..104); 0 for an unknown id.
uint64_t curand_table_bytes(uint64_t id);
// The table, or an empty span when the id is unknown or libcurand is not
// installed (one log line the first time).
std::span<const uint8_t> curand_table(uint64_t id);

} // namespace kvmgpu::vgpu
