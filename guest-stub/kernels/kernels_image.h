// The embedded kernel image: every kernel in guest-stub/kernels/*.cu,
// compiled by nvcc into one fatbin (sm_90 SASS + compute_90 PTX). Built
// without nvcc, it is a placeholder with a fatbin header and no code, which
// the VMM's host backend accepts (it ignores image contents) and a real GPU
// refuses. Pass kvmgpu_kernels_image to cuModuleLoadData.
#pragma once

#include <stdint.h>

extern "C" {
extern const unsigned char kvmgpu_kernels_image[];
extern const uint64_t kvmgpu_kernels_image_size;
extern const uint32_t kvmgpu_kernels_is_placeholder; // 1 when built without nvcc
}
