// CHECK(call): a runtime call that must succeed; otherwise the program
// names the call, where it was and the error, and exits with failure. The
// samples' one shared helper (as CUDA's own samples share helper_cuda.h),
// plain C and runtime API, so it builds for the guest and natively alike.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t err_ = (call);                                                             \
        if (err_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,          \
                    cudaGetErrorString(err_), cudaGetErrorName(err_));                         \
            exit(EXIT_FAILURE);                                                                \
        }                                                                                      \
    } while (0)
