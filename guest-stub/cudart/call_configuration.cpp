// nvcc's <<<grid, block, shared, stream>>>: the host code pushes the
// configuration (__cudaPushCallConfiguration), then the kernel's host stub
// pops it (__cudaPopCallConfiguration) and launches (__cudaLaunchKernel,
// registration.cpp). CUDA keeps this stack per thread, and so does this
// file (GUEST_PER_THREAD: thread_local in Linux guests), so two threads
// launching at once each pop the configuration they pushed. Both calls
// touch only the calling thread's stack (and Pop, on an empty one, its last
// error), so they take no lock.
#include <stdint.h>

#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

namespace {

constexpr int kMaxConfigDepth = 16;

// Plain values, not dim3 (whose constructor would make the stack
// dynamically initialized, which thread_local storage then pays for).
struct LaunchConfig {
    unsigned grid[3], block[3];
    size_t shared;
    cudaStream_t stream;
};

struct ConfigStack {
    LaunchConfig configs[kMaxConfigDepth];
    int depth;
};

GUEST_PER_THREAD constinit ConfigStack t_stack = {};

} // namespace

extern "C" {

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st* stream)
{
    ConfigStack& s = t_stack;
    if (s.depth == kMaxConfigDepth)
        return 1;
    s.configs[s.depth++] = LaunchConfig{{grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, shared, stream};
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream)
{
    ConfigStack& s = t_stack;
    if (s.depth == 0)
        return guest::cudart::record(cudaErrorMissingConfiguration);
    const LaunchConfig& c = s.configs[--s.depth];
    *grid = dim3(c.grid[0], c.grid[1], c.grid[2]);
    *block = dim3(c.block[0], c.block[1], c.block[2]);
    *shared = c.shared;
    *static_cast<cudaStream_t*>(stream) = c.stream;
    return cudaSuccess;
}

} // extern "C"
