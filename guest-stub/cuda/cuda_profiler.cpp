// cuProfilerStart/Stop: no profiler runs inside the VM (the host's sees the
// GPU worker, not the guest), so they succeed and collect nothing, which is
// what the driver does when no profiler is attached. NVIDIA's samples call
// cudaProfilerStart around their timed loops.
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda_more.h"

KVMGPU_DRIVER_ENTRY(cuProfilerStart, 4000);
extern "C" CUresult cuProfilerStart(void)
{
    return CUDA_SUCCESS;
}

KVMGPU_DRIVER_ENTRY(cuProfilerStop, 4000);
extern "C" CUresult cuProfilerStop(void)
{
    return CUDA_SUCCESS;
}
