// cuGetExportTable: the private tables by UUID (export_tables.h says why).
// An unknown UUID is refused with CUDA_ERROR_NOT_SUPPORTED, as the driver
// refuses one it lacks, and logged once by UUID; success with no table
// would send the caller through a null pointer.
#include "guest-stub/libcuda/export_tables.h"

#include <stdio.h>
#include <string.h>

#include "guest-stub/cuda/driver_entry.h"
#include "guest-stub/platform/api_lock.h"
#include "guest-stub/platform/platform.h"

namespace guest::libcuda {
namespace {

const ExportTable kTables[] = {
    {"CUDART_INTERFACE",
     {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9},
     kCudartInterface},
    {"TOOLS_TLS",
     {0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc},
     kToolsTls},
    {"TOOLS_RUNTIME_CALLBACK_HOOKS",
     {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
     kToolsRuntimeCallbackHooks},
    {"CONTEXT_LOCAL_STORAGE_INTERFACE_V0301",
     {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
     kContextLocalStorage},
    {"CTX_CREATE_BYPASS",
     {0x0c, 0xa5, 0x0b, 0x8c, 0x10, 0x04, 0x92, 0x9a, 0x89, 0xa7, 0xd0, 0xdf, 0x10, 0xe7, 0x72, 0x86},
     kCtxCreateBypass},
    {"INTEGRITY_CHECK",
     {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2},
     kIntegrityCheck},
    {"CONTEXT_CHECKS",
     {0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e},
     kContextChecks},
    {"RUNTIME_REQUIREMENTS",
     {0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9},
     kRuntimeRequirements},
    {"CONTEXT_IDENTITY",
     {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2},
     kContextIdentity},
    {"TOOLS_MODULE",
     {0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d, 0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e},
     kToolsModule},
    {"UNNAMED_1734DC26",
     {0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45, 0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca},
     kUnnamed1734},
};

constexpr int kMaxLoggedUnknown = 32;
const void* g_logged_unknown[kMaxLoggedUnknown]; // the UUIDs' first 8 bytes, as pointers
int g_logged_count = 0;

bool first_time(const unsigned char* b)
{
    uint64_t key;
    memcpy(&key, b, sizeof key);
    for (int i = 0; i < g_logged_count; ++i)
        if (g_logged_unknown[i] == reinterpret_cast<const void*>(key))
            return false;
    if (g_logged_count < kMaxLoggedUnknown)
        g_logged_unknown[g_logged_count++] = reinterpret_cast<const void*>(key);
    return true;
}

} // namespace

CUresult refuse_once(bool* said, const char* what, const char* why)
{
    if (!*said)
        platform::printf("libcuda: %s: %s, answered CUDA_ERROR_NOT_SUPPORTED\n", what, why);
    *said = true;
    return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult refuse_unknown_entry(bool* said, const char* table, unsigned index)
{
    char what[64];
    snprintf(what, sizeof what, "%s[%u] called", table, index);
    return refuse_once(said, what, "not known here");
}

} // namespace guest::libcuda

using namespace guest::libcuda;

KVMGPU_DRIVER_ENTRY(cuGetExportTable, 3000);
extern "C" CUresult cuGetExportTable(const void** table, const CUuuid* id)
{
    if (table == nullptr || id == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
    *table = nullptr;
    const unsigned char* b = reinterpret_cast<const unsigned char*>(id->bytes);
    for (const ExportTable& t : kTables) {
        if (memcmp(t.uuid, b, sizeof t.uuid) == 0) {
            *table = t.entries;
            return CUDA_SUCCESS;
        }
    }
    GUEST_API_LOCK();
    if (first_time(b))
        guest::platform::printf("libcuda: cuGetExportTable: no table "
                         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
                         b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                         b[14], b[15]);
    return CUDA_ERROR_NOT_SUPPORTED;
}
