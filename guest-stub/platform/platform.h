// The platform seam: the few things the guest Driver API (cuda/) and the
// guest cudart (cudart/) take from whatever runs them. Two implementations:
//   freestanding.cpp  the freestanding runtime (runtime/): console MMIO,
//                     own page tables, pinned frames, the exit port;
//   linux.cpp         a static Linux executable whose system calls the VMM
//                     serves: guest virtual == guest physical for all of RAM,
//                     page-locked memory from mmap, stderr, exit().
// The same cuda/ and cudart/ sources compile against this header for both.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "guest-stub/runtime/cmdline.h"
#include "guest-stub/runtime/exit_codes.h"
#include "guest-stub/runtime/sg_list.h"
#include "kvmtool-gpu/abi/platform_abi.h"

namespace guest::platform {

// Diagnostics: the freestanding console, or stderr.
size_t printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Ends the program with code (exit_codes.h).
[[noreturn]] void exit(uint32_t code);

// True where the VMM (and its vGPU) is there to reach: freestanding,
// always; Linux, when the auxiliary vector held the boot info. Only the
// shared libcuda.so.1 (KVMGPU_PLATFORM_SHARED_LIBRARY) loads without it: a
// static guest refuses to start instead. cuInit answers
// CUDA_ERROR_NO_DEVICE without it.
bool vmm_present();
// The boot info the VMM wrote (ram_size, tsc_khz, seed, flags); only where
// vmm_present().
const kvmgpu_boot_info& boot_info();
// The vgpu_* options (guest-stub/README.md): the freestanding guest's
// cmdline, or a Linux guest's KVMGPU_OPTIONS environment variable.
const Cmdline& options();
// TSC ticks in `seconds` (bounds on waits for the vGPU).
uint64_t seconds_to_tsc(uint64_t seconds);

// Page-locked memory for as long as the program runs, physically
// contiguous with GPA == VA. align: power of two; 0 = 2 MiB for requests of
// 2 MiB or more, else 4 KiB. nullptr when out of memory.
void* try_pinned_alloc_permanent(size_t bytes, size_t align = 0);
// Guest-physical address of p; false if p is not mapped guest RAM.
bool virt_to_phys(const void* p, uint64_t* gpa);
// True if [p, p+bytes) is identity-mapped RAM (so GPA == VA, contiguous).
bool is_identity_ram(const void* p, size_t bytes);
// True if [p, p+bytes) is page-locked by the platform itself, whatever the
// CUDA library allocated or registered: freestanding, the identity-mapped
// RAM (pinned_alloc; the pageable heap is mapped elsewhere); Linux, none
// (every pointer is identity-mapped there, malloc's included, so only the
// library's own page-locked blocks and registrations count).
bool platform_page_locked(const void* p, size_t bytes);
// True (and *gpa set) if [p, p+bytes) is mapped and physically contiguous.
bool phys_contiguous(const void* p, size_t bytes, uint64_t* gpa);
// Scatter-gather list of [p, p+bytes), physically contiguous neighbours merged.
SgResult build_sg(const void* p, size_t bytes, vgpu_sg_entry* out, uint64_t max_entries,
                  uint64_t* count);

// A second name, for good, for page-locked memory [ram, ram + bytes): the
// virtual range [va, va + bytes) then reaches the same bytes, and
// virt_to_phys, phys_contiguous and build_sg translate it. All 2 MiB
// aligned; va outside RAM over nothing mapped. Linux: the VMM's
// KVMGPU_LINUX_SYS_ALIAS (abi/linux_abi.h), 0 or the errno; freestanding:
// ENOSYS (its page tables are its own and it has no managed memory).
// bytes 0 only asks: 0 where aliases exist, ENOSYS where not.
int map_alias(uint64_t va, const void* ram, uint64_t bytes);

// A whole file in memory (cuModuleLoad): Linux, read through the system
// calls the VMM serves (the guest's share); freestanding, there are no
// files. *data (give it back with release_file) holds *bytes bytes and a NUL.
enum class FileResult { kOk, kNotFound, kNoFiles, kNoMemory, kReadError };
FileResult read_file(const char* path, void** data, size_t* bytes);
void release_file(void* data);

} // namespace guest::platform
