// The rules that the bandwidth guest (guest-stub/programs/bandwidth.cpp)
// and its host driver (`kvmtool-gpu bench bandwidth`) must agree on: the
// scatter-gather strategy names, which strategy runs at which size, and how
// many repetitions one measurement takes. A contract of guest and host, so
// it lives with the ABI; freestanding (no libc), so the guest compiles it; the driver plans with the same code
// and so knows exactly which measurement lines a guest owes it.
#pragma once

#include <stdint.h>

#include "kvmtool-gpu/abi/vgpu_abi.h"

namespace kvmgpu::bench {

struct SgStrategyName {
    const char* name;  // as on the cmdline and in result lines
    uint32_t value;    // enum vgpu_sg_strategy
    bool slow;         // a "naive" strategy: skipped above slow_max
};

// In the order the guest runs them: the ones the targets judge first, so a
// sweep cut short by a time limit has measured them.
inline constexpr SgStrategyName kSgStrategies[] = {
    {"auto", VGPU_SG_AUTO, false},          {"gather", VGPU_SG_GATHER_KERNEL, false},
    {"walk", VGPU_SG_DEVICE_WALK, false},   {"perchunk", VGPU_SG_PER_CHUNK, true},
    {"coalesce", VGPU_SG_COALESCE, true},   {"bounce", VGPU_SG_BOUNCE, true},
    {"batch", VGPU_SG_BATCH, true},
};
inline constexpr unsigned kSgStrategyCount = sizeof(kSgStrategies) / sizeof(kSgStrategies[0]);
static_assert(kSgStrategyCount == static_cast<unsigned>(VGPU_SG_STRATEGY_COUNT_), "one name per enum vgpu_sg_strategy value");

// The names in table order, comma-separated: the guest's default list and
// the texts that name them all (checked against the table below).
inline constexpr char kSgStrategyList[] = "auto,gather,walk,perchunk,coalesce,bounce,batch";

constexpr bool strategy_list_matches_table()
{
    unsigned at = 0;
    for (unsigned i = 0; i < kSgStrategyCount; ++i) {
        if (i > 0 && kSgStrategyList[at++] != ',')
            return false;
        for (const char* n = kSgStrategies[i].name; *n != 0; ++n)
            if (kSgStrategyList[at++] != *n)
                return false;
    }
    return kSgStrategyList[at] == 0;
}
static_assert(strategy_list_matches_table(), "kSgStrategyList must list kSgStrategies in order");

// Pageable copies are judged against the targets only with the strategies
// meant to reach them: the VMM's pick and the two that move the list on
// the GPU. The naive ones are reference points.
constexpr bool strategy_is_judged(uint32_t value)
{
    return value == VGPU_SG_AUTO || value == VGPU_SG_GATHER_KERNEL || value == VGPU_SG_DEVICE_WALK;
}

// Directions, in the order the guest runs them.
inline constexpr const char* kDirNames[] = {"htod", "dtoh"};
// Guest buffer kinds, in the order the guest runs them.
// pinned: page-locked; pageable: the heap, by SG lists; registered: a heap
// buffer the guest registered (cuMemHostRegister), copied as the library
// copies it (through the VMM's alias of its frames where there is one);
// twocopy: GViM's 2-copy, a heap buffer that the guest itself copies (CPU
// memcpy) through pinned bounce buffers of its own, chunk by chunk, each
// sent with the VMM's bounce strategy (the VMM's copy into its pinned
// staging, then DMA). Only pageable has a strategy axis.
inline constexpr const char* kKindNames[] = {"pinned", "pageable", "registered", "twocopy"};
inline constexpr unsigned kKindCount = 4;
static_assert(kKindCount == sizeof(kKindNames) / sizeof(kKindNames[0]), "kKindCount must count kKindNames");

// twocopy's bounce buffers in guest RAM: two, so that the guest copies one
// chunk while the vGPU moves the other; chunks of the VMM's own staging
// size (4 MiB), so each is one staging round there.
inline constexpr uint64_t kTwoCopyChunkBytes = 4ull << 20;
inline constexpr unsigned kTwoCopyBuffers = 2;

// A slow strategy is measured only up to slow_max bytes (0: no limit): one
// copy per 4 KiB chunk of 1 GiB is 262,144 driver calls.
constexpr bool strategy_runs_at(const SgStrategyName& s, uint64_t bytes, uint64_t slow_max)
{
    return !s.slow || slow_max == 0 || bytes <= slow_max;
}

// Trials per (kind, strategy, size, direction) cell: each is one timed
// measurement with its own events. Bounded: a sweep's time grows with them.
inline constexpr unsigned kMaxTrials = 9;

// Repetitions of one copy between the two events of a measurement: enough
// to move about `target` bytes, within [min_reps, max_reps] (min_reps >= 1).
constexpr uint64_t reps_for(uint64_t bytes, uint64_t target, uint64_t min_reps, uint64_t max_reps)
{
    if (min_reps == 0)
        min_reps = 1;
    if (max_reps < min_reps)
        max_reps = min_reps;
    const uint64_t want = bytes == 0 ? max_reps : target / bytes;
    return want < min_reps ? min_reps : want > max_reps ? max_reps : want;
}

} // namespace kvmgpu::bench
