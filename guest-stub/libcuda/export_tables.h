// cuGetExportTable's private tables: NVIDIA's cudart (shared or static, in
// every nvcc binary and NVIDIA library) asks the driver for them by UUID at
// start-up, and calls their entries in the calling process. Here each is
// answered in the guest with the guest Driver API. What each entry does is
// known from observing the real driver (kvmtool-gpu/scripts/cuda-trace/) and
// from public descriptions (ZLUDA's dark_api); docs/libcuda.md lists them.
//
// A table is an array of pointers; most begin with their own size in bytes.
// An entry whose meaning is unknown is an UnknownEntry: it returns
// CUDA_ERROR_NOT_SUPPORTED (a caller expecting void ignores it) and logs its
// table and index once, so a run shows what to implement next.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "guest-stub/cuda/guest_cuda.h"

namespace guest::libcuda {

using Entry = const void*;

struct ExportTable {
    const char* name;       // ZLUDA's name where it has one, else ours
    unsigned char uuid[16]; // as the caller's CUuuid holds it
    const Entry* entries;
};

// The tables this library answers (export_tables.cpp), each defined beside
// its entries.
extern const Entry kCudartInterface[];
extern const Entry kToolsTls[];
extern const Entry kToolsRuntimeCallbackHooks[];
extern const Entry kContextLocalStorage[];
extern const Entry kCtxCreateBypass[];
extern const Entry kIntegrityCheck[];
extern const Entry kContextChecks[];
extern const Entry kRuntimeRequirements[];
extern const Entry kContextIdentity[];
extern const Entry kToolsModule[];
extern const Entry kUnnamed1734[];

// Macros, not functions, so that every table is constant-initialized (in
// place before any constructor runs). The first word of a sized table:
#define KVMGPU_SIZE_WORD(entries) reinterpret_cast<::guest::libcuda::Entry>((entries) * sizeof(void*))
#define KVMGPU_ENTRY(fn) reinterpret_cast<::guest::libcuda::Entry>(&(fn))
#define KVMGPU_UNKNOWN(table, index) KVMGPU_ENTRY((::guest::libcuda::unknown_entry<table, index>))
// Eight unknown entries from `first` on, for the long tables.
#define KVMGPU_UNKNOWN_8(table, first)                                                                  \
    KVMGPU_UNKNOWN(table, (first)), KVMGPU_UNKNOWN(table, (first) + 1), KVMGPU_UNKNOWN(table, (first) + 2), \
        KVMGPU_UNKNOWN(table, (first) + 3), KVMGPU_UNKNOWN(table, (first) + 4),                         \
        KVMGPU_UNKNOWN(table, (first) + 5), KVMGPU_UNKNOWN(table, (first) + 6), KVMGPU_UNKNOWN(table, (first) + 7)

// One console line the first time (*said false: "libcuda: WHAT: WHY,
// answered CUDA_ERROR_NOT_SUPPORTED"), then CUDA_ERROR_NOT_SUPPORTED every
// time: the caller's error path, never a crash. A race says it twice at worst.
CUresult refuse_once(bool* said, const char* what, const char* why);
// refuse_once for entry `index` of `table`, whose meaning is not known.
CUresult refuse_unknown_entry(bool* said, const char* table, unsigned index);

template <const char* Table, unsigned Index>
CUresult unknown_entry()
{
    static bool said = false;
    return refuse_unknown_entry(&said, Table, Index);
}

} // namespace guest::libcuda
