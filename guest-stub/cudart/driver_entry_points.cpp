// cudaGetDriverEntryPoint(ByVersion): the guest Driver API's entry points,
// through its cuGetProcAddress (the runtime's flags and statuses are the
// driver's numbers).
#include "guest-stub/cudart/cudart_internal.h"
#include "guest-stub/platform/api_lock.h"

using namespace guest::cudart;

namespace {

cudaError_t entry_point(const char* symbol, void** funcPtr, unsigned int version, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* driverStatus)
{
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const CUresult r = cuGetProcAddress(symbol, funcPtr, static_cast<int>(version), flags, &status);
    if (driverStatus != nullptr && r != CUDA_ERROR_INVALID_VALUE)
        *driverStatus = static_cast<cudaDriverEntryPointQueryResult>(status);
    return record(r);
}

} // namespace

extern "C" {

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult* driverStatus)
{
    GUEST_API_LOCK();
    return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult* driverStatus)
{
    GUEST_API_LOCK();
    return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus);
}

} // extern "C"
