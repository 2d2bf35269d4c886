/* The device walk (VGPU_SG_DEVICE_WALK): the parameters its four kernels
 * share with the host code that launches them (cuda_backend_walk.cpp), and
 * the CPU reference of its rules (host_backend_sg.cpp).
 *
 * The GPU reads the guest's vgpu_sg_entry list through guest RAM's
 * zero-copy mapping, so the VMM never touches the entries:
 *   1. walk_scan   (one thread per entry, KVMGPU_WALK_SCAN_THREADS a block):
 *      reads each entry once, checks it against the RAM windows, stores
 *      its device address and the block-local inclusive end of its bytes,
 *      and each block's byte total and verdict;
 *   2. walk_offsets (one block): scans the block totals into block bases,
 *      checks that the entries sum to `total`, and writes the verdict
 *      (and bumps the host-visible rejection counter when it is bad);
 *   3. walk_units  (one thread per KVMGPU_WALK_UNIT bytes of the device
 *      side): finds the unit's first entry by binary search;
 *   4. walk_copy   (one block per unit): copies from that entry on, or does
 *      nothing when the verdict is bad.
 * Steps 1 to 3 run on a stream of their own, so they overlap the previous
 * walk's copy; the copy waits for them, and its blocks (one 4 KiB page
 * each, the granularity of the probe's fastest kernels, bench/probes/)
 * start copying at once, with no search of their own. The copy reads only
 * what steps 1 and 3 stored
 * in device memory, so a guest that rewrites its list meanwhile changes
 * nothing (no time-of-check gap). */
#ifndef KVMGPU_VGPU_SG_WALK_H
#define KVMGPU_VGPU_SG_WALK_H

#include <stdint.h>

#define KVMGPU_WALK_MAX_WINDOWS 4u      /* RAM regions a VM may have */
#define KVMGPU_WALK_SCAN_THREADS 1024u  /* entries per scan block */
#define KVMGPU_WALK_COPY_THREADS 256u
#define KVMGPU_WALK_UNIT 4096u          /* device-side bytes per copy block */
#define KVMGPU_WALK_UNIT_THREADS 256u

/* Guest-physical [gpa, gpa + bytes) is device address dev onwards. */
struct kvmgpu_ram_window {
    uint64_t gpa;
    uint64_t bytes;
    uint64_t dev;
};

struct kvmgpu_walk_params {
    uint64_t list;        /* device address of the guest's list (zero-copy) */
    uint64_t count;       /* entries, 1 .. VGPU_MAX_SG_ENTRIES */
    uint64_t total;       /* bytes the guest says they sum to */
    uint64_t dptr;        /* the contiguous device side */
    uint32_t htod;        /* 1: guest RAM -> dptr; 0: dptr -> guest RAM */
    uint32_t nwindows;
    struct kvmgpu_ram_window ram[KVMGPU_WALK_MAX_WINDOWS];
    /* Device scratch (cuda_backend_walk.cpp sizes it for count). */
    uint64_t src;         /* uint64_t[count]: device address of each entry's bytes */
    uint64_t end;         /* uint64_t[count]: block-local inclusive end offsets */
    uint64_t block_total; /* uint64_t[blocks]: totals, then the blocks' base offsets */
    uint64_t block_bad;   /* uint32_t[blocks]: nonzero where a block saw a bad entry */
    uint64_t verdict;     /* uint32_t: 1 = copy, 0 = list refused */
    uint64_t unit_first;  /* uint32_t[units]: the entry each unit starts in */
    uint64_t units;       /* ceil(total / KVMGPU_WALK_UNIT) */
    uint64_t rejections;  /* uint32_t in mapped host memory: lists refused so far */
};

/* One entry's check: nonzero length, no longer than the whole transfer
 * (which also bounds the sum of 2^20 of them below 2^64 for any real
 * allocation), and wholly inside one RAM window. Returns its device
 * address, or 0 when it is bad. Shared by the kernel and the CPU walk. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint64_t kvmgpu_walk_entry_address(const struct kvmgpu_ram_window* ram, uint32_t nwindows,
                                                 uint64_t gpa, uint64_t len, uint64_t total)
{
    if (len == 0 || len > total)
        return 0;
    for (uint32_t w = 0; w < nwindows; ++w)
        if (gpa >= ram[w].gpa && gpa - ram[w].gpa < ram[w].bytes && len <= ram[w].bytes - (gpa - ram[w].gpa))
            return ram[w].dev + (gpa - ram[w].gpa);
    return 0;
}

#endif
