// Guest memory: the runtime's own page tables and the two allocators on top.
//
// Virtual layout (after heap_init loads our CR3):
//   [0, ram_size)                 identity map of RAM, 2 MiB pages, except the
//                                 first 2 MiB in 4 KiB pages with page 0 NOT
//                                 mapped (a null dereference faults)
//   [KVMGPU_MMIO_BASE, +2 MiB)    identity, uncached (PCD|PWT), NX
//   [kHeapBase, +ram_size)        the pageable heap, 4 KiB or 2 MiB pages
//                                 (cmdline guest_pages=4K|2M, default 4K), NX
// Physical frames come from one FrameAllocator over [image_end, ram_size);
// all page-table pages (heap tables included) are taken at heap_init, so
// mark/release never frees a live table.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "guest-stub/runtime/cmdline.h"
#include "guest-stub/runtime/sg_list.h"
#include "kvmtool-gpu/abi/platform_abi.h"
#include "kvmtool-gpu/abi/vgpu_abi.h"

namespace guest {

constexpr uint64_t kHeapBase = 0x0000100000000000ull; // PML4 slot 32

// Builds the tables from the boot info and the cmdline (guest_pages=4K|2M,
// pageable_shuffle=1|0), loads CR3. Exits with kExitBadCmdline,
// kExitOutOfMemory or kExitPagingFailed on failure.
void heap_init(const kvmgpu_boot_info& info, const Cmdline& cmdline);

// Physically contiguous, identity-mapped (GPA == VA) memory, as
// cuMemAllocHost would give. align: power of two; 0 = 2 MiB for requests of
// 2 MiB or more, else 4 KiB. Not zeroed. try_: nullptr when out of memory;
// the plain form prints and exits with kExitOutOfMemory instead.
void* try_pinned_alloc(size_t bytes, size_t align = 0);
void* pinned_alloc(size_t bytes, size_t align = 0);

// Pinned memory that heap_release never takes back (from the top of RAM):
// for what lives as long as the guest, e.g. the vGPU ring and SG-list pool.
void* try_pinned_alloc_permanent(size_t bytes, size_t align = 0);

// Virtually contiguous memory in the heap region, backed by frames of the
// guest page size, assigned in a random order (seeded by boot_info.seed)
// as an OS heap's would be after some uptime; pageable_shuffle=0 keeps them
// in order. Each allocation is followed by an unmapped guard page. Not zeroed.
void* try_pageable_alloc(size_t bytes);
void* pageable_alloc(size_t bytes);

// Releases everything (both kinds, not the permanent pinned memory)
// allocated after the mark: a stack discipline for programs that sweep
// buffer sizes.
struct HeapMark {
    uint64_t frames;
    uint64_t heap_va;
};
HeapMark heap_mark();
void heap_release(HeapMark mark);

uint64_t guest_page_size(); // 4 KiB or 2 MiB: the pageable heap's page size

// Guest-physical address of p (page-table walk); false if unmapped.
bool virt_to_phys(const void* p, uint64_t* gpa);
// True if [p, p+bytes) is identity-mapped RAM (so GPA == VA, contiguous).
bool is_identity_ram(const void* p, size_t bytes);
// True (and *gpa set) if [p, p+bytes) is mapped and physically contiguous.
bool phys_contiguous(const void* p, size_t bytes, uint64_t* gpa);
// Scatter-gather list of [p, p+bytes), physically contiguous neighbours merged.
SgResult build_sg(const void* p, size_t bytes, vgpu_sg_entry* out, uint64_t max_entries,
                  uint64_t* count);

struct HeapStats {
    uint64_t ram_size;
    uint64_t frames_base, frames_used, frames_free;
    uint64_t heap_va_used;
    uint64_t table_pages;
    uint64_t page_size;
    bool shuffle;
};
HeapStats heap_stats();

} // namespace guest
