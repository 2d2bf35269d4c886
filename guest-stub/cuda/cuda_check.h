// CU_CHECK(call): for guest programs — on an error, print the call, the
// error name and the line, and exit with kExitCudaError.
#pragma once

#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/runtime/console.h"
#include "guest-stub/runtime/exit.h"

namespace guest {

[[noreturn]] inline void cuda_check_failed(const char* call, CUresult r, const char* file, int line)
{
    const char* name = nullptr;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = "(unnamed)";
    printf("%s:%d: %s failed: %s (%d)\n", file, line, call, name, (int)r);
    exit(kExitCudaError);
}

} // namespace guest

#define CU_CHECK(call)                                                                  \
    do {                                                                                \
        CUresult cu_check_r_ = (call);                                                  \
        if (cu_check_r_ != CUDA_SUCCESS)                                                \
            ::guest::cuda_check_failed(#call, cu_check_r_, __FILE__, __LINE__);         \
    } while (0)
