// The pointer-chase layout shared by the native harness and the guest
// program (guest-stub/programs/pointer_chase.cpp), so both walk the same
// virtual access pattern: a contract of guest and host, so it lives with
// the ABI. Freestanding: <stdint.h> and nothing else.
//
// A working set of W bytes holds W / 4096 nodes, one per 4 KiB page, each an
// 8-byte pointer at a hashed cache-line offset inside its page (all at
// offset 0 would map every access to the same few cache sets). The nodes
// form ONE random cycle (a Fisher-Yates shuffle of the page order, linked
// in that order), so every access is a dependent load to a different page
// in an order no prefetcher can follow: past the TLB's reach each access
// needs a page walk, which is what the sweep measures. The same seed gives
// the same cycle on 4 KiB, 2 MiB and 1 GiB pages; only the translation
// (and the physical placement) differs between them.
#pragma once

#include <stdint.h>

namespace tlbstudy {

constexpr uint64_t kChaseNodeStride = 4096; // one node per 4 KiB page
constexpr uint64_t kChaseLineBytes = 64;

// splitmix64: small, good enough for shuffles; identical on both sides.
struct ChaseRng {
    uint64_t state;
    uint64_t next()
    {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    uint64_t below(uint64_t bound) { return (uint64_t)(((unsigned __int128)next() * bound) >> 64); }
};

// Byte offset of node n's pointer inside its page: a multiple of 64 below 4096.
inline uint64_t chase_line_offset(uint64_t node)
{
    uint64_t x = node * 0xD6E8FEB86659FD93ull;
    x ^= x >> 32;
    return (x & 63) * kChaseLineBytes;
}

inline uint64_t chase_nodes(uint64_t ws_bytes)
{
    uint64_t n = ws_bytes / kChaseNodeStride;
    return n == 0 ? 1 : n;
}

// Links `nodes` nodes in [base, base + nodes * 4096) into one random cycle;
// `order` is scratch for `nodes` uint32_t. Returns the first node.
inline void* build_chase(uint8_t* base, uint64_t nodes, uint32_t* order, uint64_t seed)
{
    if (nodes == 0)
        return 0;
    ChaseRng rng{seed};
    for (uint64_t i = 0; i < nodes; ++i)
        order[i] = (uint32_t)i;
    for (uint64_t i = nodes - 1; i > 0; --i) {
        uint64_t j = rng.below(i + 1);
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (uint64_t i = 0; i < nodes; ++i) {
        uint64_t from = order[i], to = order[i + 1 == nodes ? 0 : i + 1];
        *(void**)(base + from * kChaseNodeStride + chase_line_offset(from)) =
            base + to * kChaseNodeStride + chase_line_offset(to);
    }
    return base + (uint64_t)order[0] * kChaseNodeStride + chase_line_offset(order[0]);
}

// Follows the cycle for `accesses` dependent loads (a multiple of 4 is
// exact; the rest is rounded up to one). Returns where it stopped, which the
// caller must use so the loads are not optimised away.
inline void* run_chase(void* p, uint64_t accesses)
{
    for (uint64_t i = 0; i < accesses; i += 4) {
        p = *(void**)p;
        p = *(void**)p;
        p = *(void**)p;
        p = *(void**)p;
    }
    return p;
}

// Accesses run_chase() really makes for a request of `accesses`.
inline uint64_t chase_accesses_rounded(uint64_t accesses) { return (accesses + 3) / 4 * 4; }

} // namespace tlbstudy
