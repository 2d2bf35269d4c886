// x86-64 4-level page tables built by the guest: 4 KiB and 2 MiB leaves,
// lower-half (canonical, < 2^47) virtual addresses only. Table pages come
// from a FrameAllocator in chunks; the tables are reached through a
// PhysWindow so the same code runs in the guest (identity: phys == pointer)
// and on the host over a buffer standing in for guest RAM (unit tests).
#pragma once

#include <stdint.h>

#include "guest-stub/runtime/frame_alloc.h"
#include "guest-stub/runtime/sg_list.h"

namespace guest {

namespace pte {
constexpr uint64_t kPresent = 1ull << 0;
constexpr uint64_t kWrite = 1ull << 1;
constexpr uint64_t kUser = 1ull << 2; // on every entry PageTables writes: guests run in ring 3
constexpr uint64_t kWriteThrough = 1ull << 3;
constexpr uint64_t kCacheDisable = 1ull << 4;
constexpr uint64_t kLarge = 1ull << 7; // PS: 2 MiB leaf in a PD entry
constexpr uint64_t kNoExecute = 1ull << 63;
constexpr uint64_t kAddrMask = 0x000FFFFFFFFFF000ull;
} // namespace pte

// How this code reaches physical memory: phys p is at host_base + (p - phys_base).
struct PhysWindow {
    uintptr_t host_base = 0; // an integer: in the guest it is 0 (identity)
    uint64_t phys_base = 0;
    uint64_t size = 0;
    // The 4 KiB table at phys, or nullptr if it lies outside the window.
    uint64_t* table(uint64_t phys) const;
};

class PageTables {
public:
    // Allocates and zeroes the PML4. table_chunk: bytes taken from the frame
    // allocator at a time for table pages (a power of two >= 4 KiB; 2 MiB in
    // the guest so 2 MiB-aligned data allocations are not fragmented).
    bool init(FrameAllocator* frames, PhysWindow window, uint64_t table_chunk = kPage2M);

    // Maps one page (page_size 4 KiB or 2 MiB; va and pa aligned to it).
    // flags: pte:: bits besides kPresent/kLarge/kUser (always set). false if va is not canonical,
    // something is already mapped there, or a table cannot be allocated.
    bool map(uint64_t va, uint64_t pa, uint64_t page_size, uint64_t flags);
    bool map_range(uint64_t va, uint64_t pa, uint64_t bytes, uint64_t page_size, uint64_t flags);

    // Creates every table needed so map() of [va, va+bytes) with page_size
    // never allocates (leaves stay non-present).
    bool prepare(uint64_t va, uint64_t bytes, uint64_t page_size);

    // The leaf entry mapping va and its page size; false if unmapped.
    bool leaf(uint64_t va, uint64_t** entry, uint64_t* page_size) const;
    // As leaf(), and returns how many entries of that table, *entry's
    // included (1..512), stand for va's page and the pages after it; each
    // one after the first is a leaf only if present (and, in a PD, kLarge).
    // 0 if va is unmapped.
    uint64_t leaf_run(uint64_t va, uint64_t** entry, uint64_t* page_size) const;
    // va -> pa; *page_left (optional) = bytes from va to the end of its page.
    bool translate(uint64_t va, uint64_t* pa, uint64_t* page_left = nullptr) const;
    // Appends to sg the physical pieces of [va, va + bytes) that va's leaf
    // table maps (up to 2 MiB of 4 KiB pages, 1 GiB of 2 MiB ones): one walk,
    // then a few instructions per page. Stops early at an unmapped page or
    // when sg is full. Returns the bytes appended (0: va unmapped, or full).
    uint64_t append_sg(uint64_t va, uint64_t bytes, SgWriter* sg) const;
    // Clears the leaf for va (which must be a leaf of page_size). false if none.
    bool unmap(uint64_t va, uint64_t page_size);

    uint64_t root_phys() const { return root_; }
    uint64_t table_pages() const { return table_pages_; }

private:
    bool alloc_table(uint64_t* phys);
    // Entry in the table at level (4 = PML4 .. 1 = PT) covering va.
    uint64_t* walk_to(uint64_t va, int stop_level, bool create);

    FrameAllocator* frames_ = nullptr;
    PhysWindow window_;
    uint64_t chunk_ = kPage2M;
    uint64_t pool_next_ = 0;
    uint64_t pool_end_ = 0;
    uint64_t root_ = 0;
    uint64_t table_pages_ = 0;
};

} // namespace guest
