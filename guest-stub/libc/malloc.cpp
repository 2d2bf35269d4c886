// malloc & co. on the guest's pageable heap (runtime/heap.h): memory comes
// in arenas from try_pageable_alloc (at least kArenaBytes, scattered 4 KiB or
// 2 MiB pages, an unmapped guard page after each), carved first-fit from an
// address-ordered free list; free() merges a block with its free
// neighbours. Arenas are never given back (the pageable heap has no free),
// so a freed block is reused by later requests. Before the runtime has its
// heap (static constructors) malloc returns nullptr.
//
// Every block starts with a 16-byte header; the caller's pointer follows it
// (16-byte aligned). An aligned request places its pointer further in and
// records how far, so free() finds the block. A bad or double free panics.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/runtime/exit.h"
#include "guest-stub/runtime/heap.h"

namespace {

constexpr size_t kHeader = 16;
constexpr size_t kMinBlock = 32;
constexpr size_t kArenaBytes = 16u << 20;
constexpr uint32_t kLiveMagic = 0xa110c8edu;
constexpr uint32_t kFreedMagic = 0xf7eeb10cu;

// Just before every pointer malloc returns.
struct Header {
    uint32_t magic;
    uint32_t lead;      // bytes from the block's start to this header
    uint64_t block;     // the whole block's bytes (header and lead included)
};
static_assert(sizeof(Header) == kHeader);

// At the start of every free block.
struct FreeBlock {
    uint64_t bytes;
    FreeBlock* next; // next free block, higher address
};

constinit FreeBlock* g_free = nullptr;

uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

bool round_up(size_t n, size_t to, size_t* out)
{
    if (__builtin_add_overflow(n, to - 1, out))
        return false;
    *out &= ~(to - 1);
    return true;
}

// Puts [p, p+bytes) on the free list in address order, merged with its
// neighbours where they touch (arenas never touch: a guard page follows each).
void insert_free(void* p, uint64_t bytes)
{
    auto* b = static_cast<FreeBlock*>(p);
    b->bytes = bytes;
    FreeBlock** link = &g_free;
    while (*link != nullptr && addr(*link) < addr(b))
        link = &(*link)->next;
    b->next = *link;
    *link = b;
    if (b->next != nullptr && addr(b) + b->bytes == addr(b->next)) {
        b->bytes += b->next->bytes;
        b->next = b->next->next;
    }
    if (link != &g_free) {
        auto* prev = reinterpret_cast<FreeBlock*>(reinterpret_cast<char*>(link) - offsetof(FreeBlock, next));
        if (addr(prev) + prev->bytes == addr(b)) {
            prev->bytes += b->bytes;
            prev->next = b->next;
        }
    }
}

bool grow(size_t at_least)
{
    size_t bytes;
    if (!round_up(at_least > kArenaBytes ? at_least : kArenaBytes, 4096, &bytes))
        return false;
    void* arena = guest::try_pageable_alloc(bytes);
    if (arena == nullptr)
        return false;
    insert_free(arena, bytes);
    return true;
}

// First fit for `bytes` (a multiple of 16, header included); the rest of a
// big enough block stays free.
void* take(size_t bytes)
{
    for (FreeBlock** link = &g_free; *link != nullptr; link = &(*link)->next) {
        FreeBlock* b = *link;
        if (b->bytes < bytes)
            continue;
        if (b->bytes - bytes >= kMinBlock) {
            auto* rest = reinterpret_cast<FreeBlock*>(reinterpret_cast<char*>(b) + bytes);
            rest->bytes = b->bytes - bytes;
            rest->next = b->next;
            *link = rest;
        } else {
            bytes = b->bytes;
            *link = b->next;
        }
        b->bytes = bytes; // read back by the caller as the block's size
        return b;
    }
    return nullptr;
}

// size bytes at an `align`-aligned address (align: a power of two >= 16).
void* allocate(size_t size, size_t align)
{
    if (!guest::heap_ready())
        return nullptr;
    size_t need;
    if (__builtin_add_overflow(size, kHeader + (align - 16), &need) || !round_up(need, 16, &need))
        return nullptr;
    if (need < kMinBlock)
        need = kMinBlock;
    void* block = take(need);
    if (block == nullptr) {
        if (!grow(need))
            return nullptr;
        block = take(need);
        if (block == nullptr)
            return nullptr;
    }
    const uint64_t block_bytes = static_cast<FreeBlock*>(block)->bytes;
    const uintptr_t user = (addr(block) + kHeader + align - 1) & ~(uintptr_t)(align - 1);
    auto* h = reinterpret_cast<Header*>(user - kHeader);
    h->magic = kLiveMagic;
    h->lead = static_cast<uint32_t>(addr(h) - addr(block));
    h->block = block_bytes;
    return reinterpret_cast<void*>(user);
}

Header* header_of(void* p, const char* who)
{
    auto* h = reinterpret_cast<Header*>(addr(p) - kHeader);
    if ((addr(p) & 15) != 0 || h->magic != kLiveMagic)
        guest::panic(guest::kExitPanic, "%s(%p): not a live malloc block (bad or double free)", who, p);
    return h;
}

size_t usable(const Header* h) { return h->block - h->lead - kHeader; }

} // namespace

extern "C" {

void* malloc(size_t size) { return allocate(size, 16); }

void free(void* p)
{
    if (p == nullptr)
        return;
    Header* h = header_of(p, "free");
    h->magic = kFreedMagic;
    insert_free(reinterpret_cast<char*>(h) - h->lead, h->block);
}

void* calloc(size_t count, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes))
        return nullptr;
    void* p = malloc(bytes);
    if (p != nullptr)
        memset(p, 0, bytes);
    return p;
}

void* realloc(void* p, size_t size)
{
    if (p == nullptr)
        return malloc(size);
    if (size == 0) {
        free(p);
        return nullptr;
    }
    const size_t have = usable(header_of(p, "realloc"));
    if (size <= have)
        return p;
    void* q = malloc(size);
    if (q == nullptr)
        return nullptr;
    memcpy(q, p, have);
    free(p);
    return q;
}

int posix_memalign(void** out, size_t align, size_t size)
{
    if (align < sizeof(void*) || (align & (align - 1)) != 0)
        return 22; // EINVAL
    void* p = allocate(size, align < 16 ? 16 : align);
    if (p == nullptr)
        return 12; // ENOMEM
    *out = p;
    return 0;
}

void* aligned_alloc(size_t align, size_t size)
{
    if (align == 0 || (align & (align - 1)) != 0)
        return nullptr;
    return allocate(size, align < 16 ? 16 : align);
}

void* memalign(size_t align, size_t size) { return aligned_alloc(align, size); }

} // extern "C"
