// Closing what a new process inherited: the GPU worker zygote keeps only its
// socket to the VMM, a worker only what its recipe sent (worker_zygote.h,
// worker_recipe.h).
#pragma once

#include <span>

namespace kvmgpu {

// Closes every descriptor from 3 up but those in `keep` (stdin, stdout and
// stderr stay: the VMM's own, where the process's lines go).
void close_descriptors_but(std::span<const int> keep);

} // namespace kvmgpu
