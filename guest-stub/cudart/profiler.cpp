// Profiler control (cuda_profiler_api.h). No profiler runs in the guest, so
// starting and stopping collection has nothing to switch, as for a native
// process with no profiler attached; a sticky error still reports.
#include <cuda_profiler_api.h>

#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

cudaError_t cudaProfilerStart(void)
{
    GUEST_API_LOCK();
    return guest::cudart::sticky_error();
}

cudaError_t cudaProfilerStop(void)
{
    GUEST_API_LOCK();
    return guest::cudart::sticky_error();
}
