// Guest page tables and allocators (see heap.h).
#include "guest-stub/runtime/heap.h"

#include "guest-stub/runtime/console.h"
#include "guest-stub/runtime/exit.h"
#include "guest-stub/runtime/frame_alloc.h"
#include "guest-stub/runtime/mmio.h"
#include "guest-stub/runtime/page_tables.h"
#include "guest-stub/runtime/rng.h"

namespace guest {
namespace {

FrameAllocator g_frames;
PageTables g_tables;
XorShift64 g_rng(0);
uint64_t g_ram_size;
uint64_t g_page_size = kPage4K;
uint64_t g_heap_next = kHeapBase;
uint64_t g_heap_end = kHeapBase;
bool g_shuffle = true;
bool g_ready;

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

// Ring 3 cannot write CR3: the VMM loads it (and so flushes the TLB) for us.
// Asked after building tables and after changing or clearing present entries.
void load_cr3(uint64_t root) { mmio_write64(KVMGPU_CPU_CONTROL_GPA + KVMGPU_CPU_CONTROL_REG_LOAD_CR3, root); }

[[noreturn]] void oom(const char* what, uint64_t bytes)
{
    panic(kExitOutOfMemory, "out of memory: %s of %lu bytes (frames used %lu, free %lu)", what, bytes,
          g_frames.used_bytes(), g_frames.free_bytes());
}

bool parse_page_size(const Cmdline& cmdline, uint64_t* out)
{
    StrView v;
    if (!cmdline.find("guest_pages", &v)) {
        *out = kPage4K;
        return true;
    }
    if (v.equals_nocase("4K") || v.equals_nocase("4KiB") || v.equals("4096")) {
        *out = kPage4K;
        return true;
    }
    if (v.equals_nocase("2M") || v.equals_nocase("2MiB") || v.equals("2097152")) {
        *out = kPage2M;
        return true;
    }
    return false;
}

uint64_t translate_cb(void*, uint64_t va, uint64_t bytes, SgWriter* sg)
{
    if (va >= kPage4K && va < g_ram_size) // identity RAM: contiguous to the end
        return sg_add_piece(sg, va, g_ram_size - va, bytes);
    return g_tables.append_sg(va, bytes, sg); // one walk per leaf table
}

} // namespace

void heap_init(const kvmgpu_boot_info& info, const Cmdline& cmdline)
{
    if (!parse_page_size(cmdline, &g_page_size))
        panic(kExitBadCmdline, "guest_pages must be 4K or 2M");
    bool ok = true;
    g_shuffle = cmdline.get_bool("pageable_shuffle", true, &ok);
    if (!ok)
        panic(kExitBadCmdline, "pageable_shuffle must be 0 or 1");
    g_rng = XorShift64(info.seed);
    g_ram_size = info.ram_size;

    if (!g_frames.init(info.image_end, info.ram_size))
        panic(kExitOutOfMemory, "no free RAM after the image (image_end 0x%lx, ram 0x%lx)",
              info.image_end, info.ram_size);
    PhysWindow window{0, 0, info.ram_size};
    if (!g_tables.init(&g_frames, window, kPage2M))
        oom("page-table pool", kPage2M);

    uint64_t ram_2m = round_up(info.ram_size, kPage2M);
    // First 2 MiB in 4 KiB pages, page 0 left unmapped; then 2 MiB pages.
    if (!g_tables.map_range(kPage4K, kPage4K, kPage2M - kPage4K, kPage4K, pte::kWrite) ||
        !g_tables.map_range(kPage2M, kPage2M, ram_2m - kPage2M, kPage2M, pte::kWrite) ||
        !g_tables.map(KVMGPU_MMIO_BASE, KVMGPU_MMIO_BASE, kPage2M,
                      pte::kWrite | pte::kCacheDisable | pte::kWriteThrough | pte::kNoExecute) ||
        !g_tables.prepare(kHeapBase, ram_2m, g_page_size))
        panic(kExitPagingFailed, "cannot build page tables (frames free %lu)",
              g_frames.free_bytes());
    g_heap_next = kHeapBase;
    g_heap_end = kHeapBase + ram_2m;
    load_cr3(g_tables.root_phys());
    g_ready = true;
}

// Pinned memory from the bottom (released by heap_release) or the top.
static void* pinned_from(bool top, size_t bytes, size_t align)
{
    if (align == 0)
        align = bytes >= kPage2M ? kPage2M : kPage4K;
    if (align < kPage4K)
        align = kPage4K;
    uint64_t phys;
    bool ok = top ? g_frames.alloc_top(bytes, align, &phys) : g_frames.alloc(bytes, align, &phys);
    return ok ? reinterpret_cast<void*>(phys) : nullptr;
}

void* try_pinned_alloc(size_t bytes, size_t align) { return pinned_from(false, bytes, align); }

void* try_pinned_alloc_permanent(size_t bytes, size_t align) { return pinned_from(true, bytes, align); }

void* pinned_alloc(size_t bytes, size_t align)
{
    void* p = try_pinned_alloc(bytes, align);
    if (p == nullptr)
        oom("pinned_alloc", bytes);
    return p;
}

void* try_pageable_alloc(size_t bytes)
{
    if (!g_ready || bytes == 0)
        return nullptr;
    const uint64_t ps = g_page_size;
    uint64_t pages = round_up(bytes, ps) / ps;
    if (bytes > g_heap_end - g_heap_next || (pages + 1) * ps > g_heap_end - g_heap_next)
        return nullptr;
    uint64_t frames_mark = g_frames.mark();
    uint64_t phys;
    if (!g_frames.alloc(pages * ps, ps, &phys))
        return nullptr;
    uint64_t va = g_heap_next;
    for (uint64_t i = 0; i < pages; ++i) {
        if (!g_tables.map(va + i * ps, phys + i * ps, ps, pte::kWrite | pte::kNoExecute)) {
            for (uint64_t j = 0; j < i; ++j)
                g_tables.unmap(va + j * ps, ps);
            g_frames.release(frames_mark);
            load_cr3(g_tables.root_phys());
            return nullptr;
        }
    }
    if (g_shuffle) { // Fisher-Yates over the leaf entries
        for (uint64_t i = pages - 1; i > 0; --i) {
            uint64_t j = g_rng.below(i + 1);
            uint64_t *ei, *ej, size;
            if (!g_tables.leaf(va + i * ps, &ei, &size) || !g_tables.leaf(va + j * ps, &ej, &size))
                panic(kExitPagingFailed, "heap leaf vanished at 0x%lx", va + i * ps);
            uint64_t t = *ei;
            *ei = *ej;
            *ej = t;
        }
    }
    load_cr3(g_tables.root_phys());
    g_heap_next = va + (pages + 1) * ps; // one unmapped guard page after it
    return reinterpret_cast<void*>(va);
}

void* pageable_alloc(size_t bytes)
{
    void* p = try_pageable_alloc(bytes);
    if (p == nullptr)
        oom("pageable_alloc", bytes);
    return p;
}

HeapMark heap_mark() { return HeapMark{g_frames.mark(), g_heap_next}; }

void heap_release(HeapMark mark)
{
    if (mark.heap_va < kHeapBase || mark.heap_va > g_heap_next)
        panic(kExitPanic, "heap_release: bad mark 0x%lx", mark.heap_va);
    for (uint64_t va = mark.heap_va; va < g_heap_next; va += g_page_size)
        g_tables.unmap(va, g_page_size); // guard pages: nothing to clear
    load_cr3(g_tables.root_phys());
    g_heap_next = mark.heap_va;
    if (!g_frames.release(mark.frames))
        panic(kExitPanic, "heap_release: bad frame mark 0x%lx", mark.frames);
}

uint64_t guest_page_size() { return g_page_size; }

bool virt_to_phys(const void* p, uint64_t* gpa)
{
    uint64_t va = reinterpret_cast<uintptr_t>(p);
    if (!g_ready) { // still on the VMM's identity map
        *gpa = va;
        return va < g_ram_size || g_ram_size == 0;
    }
    return g_tables.translate(va, gpa, nullptr);
}

bool is_identity_ram(const void* p, size_t bytes)
{
    uint64_t va = reinterpret_cast<uintptr_t>(p);
    return va >= kPage4K && va < g_ram_size && bytes <= g_ram_size - va;
}

bool phys_contiguous(const void* p, size_t bytes, uint64_t* gpa)
{
    vgpu_sg_entry one;
    uint64_t count;
    if (build_sg(p, bytes, &one, 1, &count) != SgResult::kOk || count != 1)
        return false;
    *gpa = one.gpa;
    return true;
}

SgResult build_sg(const void* p, size_t bytes, vgpu_sg_entry* out, uint64_t max_entries,
                  uint64_t* count)
{
    return build_sg_list(reinterpret_cast<uintptr_t>(p), bytes, translate_cb, nullptr, out,
                         max_entries, count);
}

HeapStats heap_stats()
{
    return HeapStats{g_ram_size,
                     g_frames.base(),
                     g_frames.used_bytes(),
                     g_frames.free_bytes(),
                     g_heap_next - kHeapBase,
                     g_tables.table_pages(),
                     g_page_size,
                     g_shuffle};
}

} // namespace guest
