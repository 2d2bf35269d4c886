// The runtime's implicit context: the current device (cudaSetDevice, 0 by
// default) and its primary context, retained and made current on the first
// call that needs the device, as the real runtime does. Modules load at
// their first use (CUDA's default, lazy loading), or all of them with the
// context where the guest's environment has CUDA_MODULE_LOADING=EAGER.
#include <stdlib.h>
#include <string.h>

#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

namespace {

constinit bool g_initialized = false;
// Per thread, as in CUDA: the device cudaSetDevice chose, and the context
// this thread last made current (a new thread starts on device 0 with none).
GUEST_PER_THREAD constinit int g_device = 0;
constinit CUcontext g_primary[guest::cudart::kMaxDevices] = {};
GUEST_PER_THREAD constinit CUcontext g_current = nullptr;

} // namespace

namespace guest::cudart {

bool eager_module_loading()
{
    const char* v = getenv("CUDA_MODULE_LOADING");
    return v != nullptr && strcmp(v, "EAGER") == 0;
}

int current_device() { return g_device; }
void set_current_device(int dev) { g_device = dev; }

cudaError_t enter()
{
    if (cudaError_t e = sticky_error())
        return e;
    if (!g_initialized) {
        if (CUresult r = cuInit(0))
            return record(r);
        g_initialized = true;
    }
    if (g_device < 0 || g_device >= kMaxDevices)
        return record(cudaErrorInvalidDevice);
    CUcontext& primary = g_primary[g_device];
    const bool first = primary == nullptr;
    if (first) {
        if (CUresult r = cuDevicePrimaryCtxRetain(&primary, g_device))
            return record(r);
    }
    if (g_current != primary) {
        if (CUresult r = cuCtxSetCurrent(primary))
            return record(r);
        g_current = primary;
    }
    if (first && eager_module_loading())
        load_every_module(g_device);
    return cudaSuccess;
}

cudaError_t primary_context(int dev, CUcontext* out)
{
    if (cudaError_t e = enter()) // cuInit, and the current device's context
        return e;
    if (dev < 0 || dev >= kMaxDevices)
        return cudaErrorInvalidDevice;
    if (g_primary[dev] == nullptr) {
        if (CUresult r = cuDevicePrimaryCtxRetain(&g_primary[dev], dev)) {
            g_primary[dev] = nullptr;
            return from_driver(r);
        }
    }
    *out = g_primary[dev];
    return cudaSuccess;
}

void forget_primary_context(int dev)
{
    if (dev < 0 || dev >= kMaxDevices)
        return;
    if (g_current == g_primary[dev])
        g_current = nullptr;
    g_primary[dev] = nullptr;
}

} // namespace guest::cudart
