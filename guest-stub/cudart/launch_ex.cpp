// cudaLaunchKernelExC: the runtime's launch configuration and attributes
// (the Driver API's numbers and value layout) over the guest's
// cuLaunchKernelEx, which says which attributes are offered (guest_cuda.h).
#include <string.h>

#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {
constexpr unsigned kMaxAttributes = 32;
static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute), "the runtime's attributes are the driver's");
} // namespace

extern "C" cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args)
{
    GUEST_API_LOCK();
    if (config == nullptr || (config->numAttrs > 0 && config->attrs == nullptr))
        return record(cudaErrorInvalidValue);
    if (config->numAttrs > kMaxAttributes || config->dynamicSmemBytes > 0xffffffffu)
        return record(cudaErrorInvalidValue);
    CUfunction f;
    if (cudaError_t e = enter_with_function(func, &f))
        return e;
    CUlaunchAttribute attrs[kMaxAttributes];
    if (config->numAttrs > 0)
        memcpy(attrs, config->attrs, sizeof(CUlaunchAttribute) * config->numAttrs);
    const CUlaunchConfig c{config->gridDim.x,  config->gridDim.y,  config->gridDim.z,
                           config->blockDim.x, config->blockDim.y, config->blockDim.z,
                           static_cast<unsigned>(config->dynamicSmemBytes), config->stream, attrs,
                           config->numAttrs};
    return record(cuLaunchKernelEx(&c, f, args, nullptr));
}
