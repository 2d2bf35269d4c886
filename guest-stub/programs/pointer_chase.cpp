// pointer_chase: the guest half of the TLB study (tlb-study/). For each
// working set on the command line it allocates a pageable buffer (page
// size from guest_pages=4K|2M, frames shuffled), links one node per 4 KiB
// page into a random cycle (kvmtool-gpu/abi/chase_layout.h, the same layout the
// native harness uses), walks it once to warm up, then times
// chase_accesses dependent loads with the TSC, chase_reps times, and prints
//   CHASE ws=<bytes> pages=<4K|2M> nodes=<n> accesses=<n> reps=<r> tsc=<median ticks> tsc_min=<ticks> tsc_khz=<k>
// then `CHASE-DONE sets=<count>`. The VMM turns ticks into ns per access.
// Integer-only (no SSE): guest code may run in an instruction emulator.
//
// cmdline: chase_ws=4K,64K,1M (required; sizes with K/M/G suffixes, at
// most 64 entries) chase_accesses=65536 chase_reps=3 chase_seed=<n>
// (default: the boot seed), plus the runtime's guest_pages.
#include "guest-stub/runtime/runtime.h"
#include "kvmtool-gpu/abi/chase_layout.h"
#include "kvmtool-gpu/abi/console_tags.h"

using namespace guest;

namespace {

constexpr uint32_t kMaxSets = 64;
constexpr uint32_t kMaxReps = 31;

int bad_cmdline(const char* what)
{
    printf("pointer_chase: bad cmdline: %s\n", what);
    return (int)kExitBadCmdline;
}

// Splits chase_ws on commas into sizes; false on junk, zero or too many.
bool parse_ws_list(uint64_t* out, uint32_t* count)
{
    StrView v;
    if (!cmdline().find("chase_ws", &v) || v.len == 0)
        return false;
    *count = 0;
    size_t start = 0;
    for (size_t i = 0; i <= v.len; ++i) {
        if (i < v.len && v.data[i] != ',')
            continue;
        StrView item{v.data + start, i - start};
        uint64_t bytes;
        if (*count == kMaxSets || !parse_u64(item, &bytes) || bytes == 0)
            return false;
        out[(*count)++] = bytes;
        start = i + 1;
    }
    return true;
}

} // namespace

int guest_main(const kvmgpu_boot_info* info)
{
    uint64_t sets[kMaxSets];
    uint32_t nsets = 0;
    if (!parse_ws_list(sets, &nsets))
        return bad_cmdline("chase_ws must be a comma-separated list of sizes, e.g. chase_ws=4K,64K,1M");
    bool ok = true;
    const uint64_t accesses = tlbstudy::chase_accesses_rounded(cmdline().get_u64("chase_accesses", 65536, &ok));
    const uint64_t reps = cmdline().get_u64("chase_reps", 3, &ok);
    const uint64_t seed = cmdline().get_u64("chase_seed", info->seed, &ok);
    if (!ok || accesses == 0 || reps == 0 || reps > kMaxReps)
        return bad_cmdline("chase_accesses must be > 0 and chase_reps in [1, 31]");
    const char* pages = guest_page_size() == (2ull << 20) ? "2M" : "4K";
    printf("pointer_chase: %u working sets, %lu accesses x %lu reps, guest pages %s, host pages %lu KiB, "
           "tsc %lu kHz (%s)\n",
           nsets, accesses, reps, pages, info->host_page_size >> 10, tsc_khz(), tsc_source());

    for (uint32_t s = 0; s < nsets; ++s) {
        const uint64_t nodes = tlbstudy::chase_nodes(sets[s]);
        const HeapMark mark = heap_mark();
        auto* buf = static_cast<uint8_t*>(pageable_alloc(nodes * tlbstudy::kChaseNodeStride));
        auto* order = static_cast<uint32_t*>(pinned_alloc(nodes * sizeof(uint32_t)));
        void* p = tlbstudy::build_chase(buf, nodes, order, seed);
        // Warm up: one lap of the cycle, or as much of it as the timed run covers.
        p = tlbstudy::run_chase(p, nodes < accesses ? nodes : accesses);
        uint64_t ticks[kMaxReps];
        for (uint64_t r = 0; r < reps; ++r) {
            const uint64_t t0 = tsc_begin();
            p = tlbstudy::run_chase(p, accesses);
            const uint64_t t1 = tsc_end();
            ticks[r] = t1 - t0;
        }
        // Keep the chase's result alive (and sanity-check it points into buf).
        const uint64_t at = reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(buf);
        if (at >= nodes * tlbstudy::kChaseNodeStride)
            panic(kExitPanic, "pointer_chase: chase left the buffer (offset 0x%lx)", at);
        sort_u64(ticks, reps);
        printf(KVMGPU_TAG_CHASE " ws=%lu pages=%s nodes=%lu accesses=%lu reps=%lu tsc=%lu tsc_min=%lu tsc_khz=%lu\n",
               nodes * tlbstudy::kChaseNodeStride, pages, nodes, accesses, reps, ticks[reps / 2], ticks[0],
               tsc_khz());
        heap_release(mark);
    }
    printf(KVMGPU_TAG_CHASE_DONE " sets=%u\n", nsets);
    return 0;
}
