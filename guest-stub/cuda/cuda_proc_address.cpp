// cuGetProcAddress: the guest library's own entry points by name, from the
// table generated from their KVMGPU_DRIVER_ENTRY markers (driver_entry.h;
// cuda_entry_points.h in the build tree, sorted by name, then version).
#include <string.h>

#include "guest-stub/cuda/cuda_entry_points.h"
#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/cuda/guest_cuda.h"
#include "guest-stub/cuda/versioned_forms.h"
#include "guest-stub/platform/api_lock.h"

namespace {

struct EntryPoint {
    const char* name;
    int version;
    void* fn;
};

#define KVMGPU_ENTRY(name, version, symbol) {#name, version, reinterpret_cast<void*>(&symbol)},
const EntryPoint kEntryPoints[] = {KVMGPU_GUEST_DRIVER_ENTRY_POINTS(KVMGPU_ENTRY)};
#undef KVMGPU_ENTRY

constexpr cuuint64_t kKnownFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;

} // namespace

KVMGPU_DRIVER_ENTRY_AS(cuGetProcAddress, 12000, cuGetProcAddress_v2);
extern "C" CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult* symbolStatus)
{
    GUEST_API_LOCK();
    // A version past the driver's is refused, as the driver refuses it
    // (the conformance guest checks both); a later runtime asks at the
    // driver's version (cuDriverGetVersion) instead.
    if (symbol == nullptr || pfn == nullptr || (flags & ~kKnownFlags) != 0 || cudaVersion > kvmgpu_guest_driver_version)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = nullptr;
    bool named = false;
    for (const EntryPoint& e : kEntryPoints) { // a hundred-odd names: looked up rarely
        if (strcmp(e.name, symbol) != 0)
            continue;
        named = true;
        if (e.version <= cudaVersion)
            *pfn = e.fn; // the table is in version order: the newest that fits wins
    }
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    if (*pfn == nullptr)
        status = named ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (symbolStatus != nullptr)
        *symbolStatus = status;
    return status == CU_GET_PROC_ADDRESS_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
