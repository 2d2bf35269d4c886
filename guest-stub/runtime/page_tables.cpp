// Guest page-table builder (see page_tables.h).
#include "guest-stub/runtime/page_tables.h"

namespace guest {
namespace {

constexpr uint64_t kCanonicalLimit = 1ull << 47;

unsigned index_at(uint64_t va, int level) { return (unsigned)((va >> (12 + 9 * (level - 1))) & 511); }

} // namespace

uint64_t* PhysWindow::table(uint64_t phys) const
{
    if ((phys & (kPage4K - 1)) != 0 || phys < phys_base || phys - phys_base >= size ||
        size - (phys - phys_base) < kPage4K)
        return nullptr;
    return reinterpret_cast<uint64_t*>(host_base + (uintptr_t)(phys - phys_base));
}

bool PageTables::init(FrameAllocator* frames, PhysWindow window, uint64_t table_chunk)
{
    if (frames == nullptr || table_chunk < kPage4K || (table_chunk & (table_chunk - 1)) != 0)
        return false;
    frames_ = frames;
    window_ = window;
    chunk_ = table_chunk;
    pool_next_ = pool_end_ = 0;
    table_pages_ = 0;
    return alloc_table(&root_);
}

bool PageTables::alloc_table(uint64_t* phys)
{
    if (pool_next_ == pool_end_) {
        uint64_t chunk;
        if (!frames_->alloc(chunk_, chunk_, &chunk))
            return false;
        pool_next_ = chunk;
        pool_end_ = chunk + chunk_;
    }
    uint64_t* t = window_.table(pool_next_);
    if (t == nullptr)
        return false;
    for (unsigned i = 0; i < 512; ++i)
        t[i] = 0;
    *phys = pool_next_;
    pool_next_ += kPage4K;
    ++table_pages_;
    return true;
}

uint64_t* PageTables::walk_to(uint64_t va, int stop_level, bool create)
{
    uint64_t table_phys = root_;
    for (int level = 4;; --level) {
        uint64_t* t = window_.table(table_phys);
        if (t == nullptr)
            return nullptr;
        uint64_t* e = &t[index_at(va, level)];
        if (level == stop_level)
            return e;
        if ((*e & pte::kPresent) == 0) {
            if (!create)
                return nullptr;
            uint64_t next;
            if (!alloc_table(&next))
                return nullptr;
            *e = next | pte::kPresent | pte::kWrite | pte::kUser;
        } else if ((*e & pte::kLarge) != 0) {
            return nullptr; // a large leaf sits where a table is needed
        }
        table_phys = *e & pte::kAddrMask;
    }
}

bool PageTables::map(uint64_t va, uint64_t pa, uint64_t page_size, uint64_t flags)
{
    if (page_size != kPage4K && page_size != kPage2M)
        return false;
    if ((va | pa) & (page_size - 1) || va >= kCanonicalLimit || (pa & ~pte::kAddrMask) != 0)
        return false;
    uint64_t* e = walk_to(va, page_size == kPage2M ? 2 : 1, true);
    if (e == nullptr || (*e & pte::kPresent) != 0)
        return false;
    uint64_t f = flags & ~(pte::kAddrMask | pte::kLarge);
    *e = pa | f | pte::kPresent | pte::kUser | (page_size == kPage2M ? pte::kLarge : 0);
    return true;
}

bool PageTables::map_range(uint64_t va, uint64_t pa, uint64_t bytes, uint64_t page_size,
                           uint64_t flags)
{
    if (page_size == 0 || bytes % page_size != 0 || va > kCanonicalLimit ||
        bytes > kCanonicalLimit - va || pa > UINT64_MAX - bytes)
        return false;
    for (uint64_t off = 0; off < bytes; off += page_size)
        if (!map(va + off, pa + off, page_size, flags))
            return false;
    return true;
}

bool PageTables::prepare(uint64_t va, uint64_t bytes, uint64_t page_size)
{
    if (page_size != kPage4K && page_size != kPage2M)
        return false;
    if (va > kCanonicalLimit || bytes > kCanonicalLimit - va)
        return false;
    int stop = page_size == kPage2M ? 2 : 1;
    uint64_t step = page_size == kPage2M ? (1ull << 30) : kPage2M; // one table covers this
    uint64_t first = va & ~(step - 1);
    for (uint64_t a = first; a < va + bytes; a += step)
        if (walk_to(a, stop, true) == nullptr)
            return false;
    return true;
}

bool PageTables::leaf(uint64_t va, uint64_t** entry, uint64_t* page_size) const
{
    return leaf_run(va, entry, page_size) != 0;
}

uint64_t PageTables::leaf_run(uint64_t va, uint64_t** entry, uint64_t* page_size) const
{
    if (va >= kCanonicalLimit)
        return 0;
    uint64_t table_phys = root_;
    for (int level = 4; level >= 1; --level) {
        uint64_t* t = window_.table(table_phys);
        if (t == nullptr)
            return 0;
        unsigned index = index_at(va, level);
        uint64_t* e = &t[index];
        if ((*e & pte::kPresent) == 0)
            return 0;
        if (level == 1 || (level == 2 && (*e & pte::kLarge) != 0)) {
            *entry = e;
            *page_size = level == 1 ? kPage4K : kPage2M;
            return 512 - index;
        }
        if ((*e & pte::kLarge) != 0)
            return 0; // 1 GiB leaves are never created here
        table_phys = *e & pte::kAddrMask;
    }
    return 0;
}

uint64_t PageTables::append_sg(uint64_t va, uint64_t bytes, SgWriter* sg) const
{
    uint64_t* e;
    uint64_t size;
    const uint64_t avail = bytes == 0 ? 0 : leaf_run(va, &e, &size);
    if (avail == 0)
        return 0;
    // off + bytes cannot wrap: off <= va, and the caller's va + bytes does not.
    const unsigned shift = size == kPage2M ? 21 : 12;
    const uint64_t off = va & (size - 1);
    const uint64_t needed = ((off + bytes - 1) >> shift) + 1;
    const uint64_t pages = needed < avail ? needed : avail;
    const uint64_t frame_mask = pte::kAddrMask & ~(size - 1);
    const uint64_t leaf_bits = size == kPage2M ? pte::kPresent | pte::kLarge : pte::kPresent;
    // [run_pa, run_end) grows while the next frame continues it and goes to
    // the list when one does not: a continuing page costs a load, two
    // compares and an add, a new entry a few stores. A local copy of the
    // writer lets the compiler keep its state in registers.
    SgWriter w = *sg;
    uint64_t run_pa = (e[0] & frame_mask) + off, run_end = (e[0] & frame_mask) + size;
    uint64_t done = 0; // bytes already in w
    for (uint64_t i = 1; i < pages; ++i) {
        const uint64_t v = e[i], pa = v & frame_mask;
        if ((v & leaf_bits) != leaf_bits)
            break; // unmapped, or a PD entry that points to a page table
        if (pa == run_end) {
            run_end += size;
            continue;
        }
        if (!w.add(run_pa, run_end - run_pa)) {
            *sg = w;
            return done;
        }
        done += run_end - run_pa;
        run_pa = pa;
        run_end = pa + size;
    }
    // The last run may end past the range (in its last page).
    uint64_t len = run_end - run_pa < bytes - done ? run_end - run_pa : bytes - done;
    if (w.add(run_pa, len))
        done += len;
    *sg = w;
    return done;
}

bool PageTables::translate(uint64_t va, uint64_t* pa, uint64_t* page_left) const
{
    uint64_t* e;
    uint64_t size;
    if (!leaf(va, &e, &size))
        return false;
    uint64_t base = *e & pte::kAddrMask & ~(size - 1);
    *pa = base + (va & (size - 1));
    if (page_left != nullptr)
        *page_left = size - (va & (size - 1));
    return true;
}

bool PageTables::unmap(uint64_t va, uint64_t page_size)
{
    uint64_t* e;
    uint64_t size;
    if (!leaf(va, &e, &size) || size != page_size)
        return false;
    *e = 0;
    return true;
}

} // namespace guest
