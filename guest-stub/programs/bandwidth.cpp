// bandwidth: host<->device copy bandwidth seen from inside the guest, for
// `kvmtool-gpu bench bandwidth` (which boots it once per host backing and
// guest page size, and compares with native figures from the same run).
//
// For each guest buffer kind (pinned: physically contiguous; pageable:
// scattered frames of the heap's page size; registered: such a buffer after
// cuMemHostRegister, copied as the library copies it, with one
//   BW-REG gpages=4K bytes=N register_ns=.. device_address=yes status=ok
// line for its registration; twocopy: GViM's 2-copy, a pageable buffer the
// guest copies through two pinned bounce buffers of its own, see
// twocopy_htod), each scatter-gather strategy (pageable only),
// each size and direction (a cell), it warms up with one
// copy, then measures `trials` times and prints one line per trial:
//   BW dir=htod kind=pageable gpages=4K strategy=gather bytes=67108864 reps=4
//      event_ns=5432100 wall_ns=98765432 clock=events gbps=49.41 attempts=1
//      trial=2/3 n=17/96 status=ok
// (n: measurements printed / planned, trials included).
// clock: what gbps divides by. events (event_ns) for every kind but
//   twocopy; tsc (wall_ns, event_ns=0) for twocopy, whose guest memcpy is
//   half of the mode and must be in the figure. In ring 3 on KVM the guest
//   runs natively, so its TSC is hardware time.
// event_ns: GPU time between two CUDA events recorded on the copy stream
//   around `reps` copies, summed as the device reports it. Deferred
//   submission is on, so events and copies reach the vGPU in one doorbell
//   and the span holds the VMM's and the GPU's work, not the guest's own
//   instructions (which kvm-pvm emulates, ~100x slower).
// wall_ns: guest TSC from before the first event to after the end event
//   completed: guest work included (SG lists, ring), so it is emulator time
//   where guest code is emulated.
// status: ok, not_supported (the backend lacks the strategy), or
//   error:<CUresult name>. Before the lines of each (kind, strategy) a
//   BW-CHECK line reports a round-trip data check of `verify` bytes.
//
// Cmdline (defaults are a small sweep, so `run --guest bandwidth` is quick):
//   sizes=4K,64K,1M   dirs=htod,dtoh   kinds=pinned,pageable (or registered, twocopy)
//   strategies=auto,gather,walk,perchunk,coalesce,bounce,batch (kSgStrategyList)
//   slow_max=0        skip perchunk/coalesce/bounce/batch above this size (0: never)
//   target=64M reps_min=2 reps_max=20   repetitions: ~target bytes per measurement
//   verify=64K        bytes of the data check per (kind, strategy); 0 = off
//   trials=1          measurements per cell, 1..kMaxTrials
// plus the runtime's guest_pages=4K|2M and vgpu_sg_entries.
// Exit: 0 when every measurement ended ok or not_supported and every check
// matched; 1 a data check failed; 2 a measurement failed; 64 set-up failed.
#include "guest-stub/programs/bench_guest.h"
#include "guest-stub/programs/bench_support.h"
#include "guest-stub/programs/program_common.h"
#include "kvmtool-gpu/abi/bandwidth_rules.h"
#include "kvmtool-gpu/abi/console_tags.h"

using namespace guest;
using kvmgpu::bench::kDirNames;
using kvmgpu::bench::kKindCount;
using kvmgpu::bench::kKindNames;
using kvmgpu::bench::kSgStrategies;
using kvmgpu::bench::kSgStrategyCount;
using kvmgpu::bench::kSgStrategyList;

namespace {

constexpr unsigned kMaxSizes = 32;
constexpr uint32_t kExitCheckMismatch = 1;
constexpr uint32_t kExitMeasurementFailed = 2;
constexpr uint64_t kLibrarySgEntries = 1u << 18; // guest CUDA API's vgpu_sg_entries default
constexpr unsigned kMaxAttempts = 3;

struct Config {
    uint64_t sizes[kMaxSizes];
    unsigned nsizes = 0;
    uint32_t dirs = 0, kinds = 0, strategies = 0; // bit masks over the name tables
    uint64_t slow_max = 0, target = 0, reps_min = 0, reps_max = 0, verify = 0, trials = 0;
    uint64_t max_size = 0;
    uint64_t sg_pool = 0; // entries in the guest CUDA API's SG-list pool
};

bool parse_config(Config* c)
{
    const char* strategy_names[kSgStrategyCount];
    for (unsigned i = 0; i < kSgStrategyCount; ++i)
        strategy_names[i] = kSgStrategies[i].name;
    if (!parse_size_list(cmdline_value_or("sizes", "4K,64K,1M"), c->sizes, kMaxSizes, &c->nsizes)) {
        printf("bandwidth: sizes= must be a list of 1..%u non-zero sizes, e.g. 4K,64K,1M\n", kMaxSizes);
        return false;
    }
    if (!parse_name_mask(cmdline_value_or("dirs", "htod,dtoh"), kDirNames, 2, &c->dirs) ||
        !parse_name_mask(cmdline_value_or("kinds", "pinned,pageable"), kKindNames, kKindCount, &c->kinds) ||
        !parse_name_mask(cmdline_value_or("strategies", kSgStrategyList), strategy_names, kSgStrategyCount,
                         &c->strategies)) {
        printf("bandwidth: dirs= (htod,dtoh), kinds= (pinned,pageable,registered,twocopy) or strategies= (%s) has an "
               "unknown name\n",
               kSgStrategyList);
        return false;
    }
    bool ok = true;
    const Cmdline& cl = cmdline();
    c->slow_max = cl.get_u64("slow_max", 0, &ok);
    c->target = cl.get_u64("target", 64u << 20, &ok);
    c->reps_min = cl.get_u64("reps_min", 2, &ok);
    c->reps_max = cl.get_u64("reps_max", 20, &ok);
    c->verify = cl.get_u64("verify", 64u << 10, &ok);
    c->trials = cl.get_u64("trials", 1, &ok);
    c->sg_pool = cl.get_u64("vgpu_sg_entries", kLibrarySgEntries, &ok);
    if (c->sg_pool == 0 || c->sg_pool > VGPU_MAX_SG_ENTRIES)
        c->sg_pool = kLibrarySgEntries; // as the library does
    if (!ok || c->reps_min == 0 || c->reps_max < c->reps_min || c->trials == 0 ||
        c->trials > kvmgpu::bench::kMaxTrials) {
        printf("bandwidth: slow_max/target/reps_min/reps_max/verify/trials must be numbers, 1 <= reps_min <= "
               "reps_max, 1 <= trials <= %u\n",
               kvmgpu::bench::kMaxTrials);
        return false;
    }
    for (unsigned i = 0; i < c->nsizes; ++i)
        if (c->sizes[i] > c->max_size)
            c->max_size = c->sizes[i];
    return true;
}

bool has(uint32_t mask, unsigned i) { return (mask >> i) & 1u; }

// The measurements this configuration owes, as the driver counts them:
// every trial of every cell.
uint64_t planned_measurements(const Config& c)
{
    uint64_t n = 0;
    const uint64_t dirs = (uint64_t)has(c.dirs, 0) + has(c.dirs, 1);
    for (unsigned s = 0; s < c.nsizes; ++s) {
        // pinned, registered, twocopy: no strategies
        n += dirs * ((uint64_t)has(c.kinds, 0) + has(c.kinds, 2) + has(c.kinds, 3));
        if (has(c.kinds, 1))
            for (unsigned k = 0; k < kSgStrategyCount; ++k)
                if (has(c.strategies, k) && kvmgpu::bench::strategy_runs_at(kSgStrategies[k], c.sizes[s], c.slow_max))
                    n += dirs;
    }
    return n * c.trials;
}

enum Kind : unsigned { kPinned = 0, kPageable = 1, kRegistered = 2, kTwoCopy = 3 };

using kvmgpu::bench::kTwoCopyBuffers;
using kvmgpu::bench::kTwoCopyChunkBytes;

// twocopy's pinned bounce buffers in guest RAM, each with the event that
// says the vGPU is done with its last chunk.
struct BounceRing {
    uint8_t* buf[kTwoCopyBuffers];
    CUevent done[kTwoCopyBuffers];
    bool pending[kTwoCopyBuffers]; // a chunk was recorded on done[i] and not waited for
    unsigned next = 0;
};

// Waits for buffer i's last chunk, if it has one in flight.
CUresult settle(BounceRing* b, unsigned i)
{
    if (!b->pending[i])
        return CUDA_SUCCESS;
    b->pending[i] = false;
    return cuEventSynchronize(b->done[i]);
}

// After a stream synchronize every chunk has landed: nothing to wait for.
void settled(BounceRing* b)
{
    for (unsigned i = 0; i < kTwoCopyBuffers; ++i)
        b->pending[i] = false;
}

// Marks buffer i's queued chunk copy (r: how queueing it went) with its
// event.
CUresult mark_chunk(BounceRing* b, unsigned i, CUresult r, CUstream stream)
{
    if (r == CUDA_SUCCESS)
        r = cuEventRecord(b->done[i], stream);
    if (r == CUDA_SUCCESS)
        b->pending[i] = true;
    return r;
}

// GViM's 2-copy, host to device: the guest copies each chunk of its
// pageable buffer into a bounce buffer (copy 1), the VMM copies that into
// its pinned staging (copy 2, VGPU_SG_BOUNCE), then DMA. Returns with the
// last chunk queued, as an async copy does.
CUresult twocopy_htod(BounceRing* b, CUdeviceptr dev, const uint8_t* src, uint64_t bytes, CUstream stream)
{
    for (uint64_t off = 0; off < bytes; off += kTwoCopyChunkBytes) {
        const uint64_t n = bytes - off < kTwoCopyChunkBytes ? bytes - off : kTwoCopyChunkBytes;
        const unsigned i = b->next;
        b->next = (i + 1) % kTwoCopyBuffers;
        if (CUresult r = settle(b, i)) // its previous chunk has left the buffer
            return r;
        memcpy(b->buf[i], src + off, n);
        if (CUresult r = mark_chunk(b, i, vgpuMemcpyHtoDScattered(dev + off, b->buf[i], n, stream, VGPU_SG_BOUNCE),
                                    stream))
            return r;
        // With more of the buffer to copy, ring now (deferred submission
        // would hold the chunk): the vGPU moves it while the guest copies
        // the next. The last chunk goes with the next waiting call, as any
        // queued copy does.
        if (off + n < bytes)
            if (CUresult r = vgpuFlush())
                return r;
    }
    return CUDA_SUCCESS;
}

// The reverse: DMA into the VMM's staging, the VMM's copy into a bounce
// buffer, the guest's copy into its pageable buffer. Chunk k+1 is queued
// before the guest waits for chunk k (the wait rings for both) and unpacks
// it, so the two overlap; returns once the data is in `dst` (the guest's
// copy is part of the transfer).
CUresult twocopy_dtoh(BounceRing* b, uint8_t* dst, CUdeviceptr dev, uint64_t bytes, CUstream stream)
{
    uint64_t prev_off = 0, prev_n = 0;
    unsigned prev_i = 0;
    for (uint64_t off = 0;; off += kTwoCopyChunkBytes) {
        const bool more = off < bytes;
        const uint64_t n = !more ? 0 : bytes - off < kTwoCopyChunkBytes ? bytes - off : kTwoCopyChunkBytes;
        const unsigned i = b->next;
        if (more) {
            b->next = (i + 1) % kTwoCopyBuffers;
            if (CUresult r = settle(b, i)) // an htod chunk may still be reading it
                return r;
            if (CUresult r = mark_chunk(
                    b, i, vgpuMemcpyDtoHScattered(b->buf[i], dev + off, n, stream, VGPU_SG_BOUNCE), stream))
                return r;
        }
        if (prev_n != 0) {
            if (CUresult r = settle(b, prev_i))
                return r;
            memcpy(dst + prev_off, b->buf[prev_i], prev_n);
        }
        if (!more)
            return CUDA_SUCCESS;
        prev_off = off, prev_n = n, prev_i = i;
    }
}

struct Target {
    Kind kind;
    unsigned strategy; // index into kSgStrategies (pageable only)
    bool lists;        // its copies go as SG lists (pageable; registered without a device address)
    CUdeviceptr dev;
    uint8_t* host;
    CUstream stream;
    BounceRing* bounce; // twocopy only
};

CUresult issue_copy(const Target& t, unsigned dir, uint64_t bytes)
{
    if (t.kind == kTwoCopy)
        return dir == 0 ? twocopy_htod(t.bounce, t.dev, t.host, bytes, t.stream)
                        : twocopy_dtoh(t.bounce, t.host, t.dev, bytes, t.stream);
    if (t.kind != kPageable) // as a program copies: the library picks the way
        return dir == 0 ? cuMemcpyHtoDAsync(t.dev, t.host, bytes, t.stream)
                        : cuMemcpyDtoHAsync(t.host, t.dev, bytes, t.stream);
    const unsigned how = kSgStrategies[t.strategy].value;
    return dir == 0 ? vgpuMemcpyHtoDScattered(t.dev, t.host, bytes, t.stream, how)
                    : vgpuMemcpyDtoHScattered(t.host, t.dev, bytes, t.stream, how);
}

// One copy and a stream synchronize; the first error, held ones included.
CUresult copy_and_sync(const Target& t, unsigned dir, uint64_t bytes)
{
    CUresult r = issue_copy(t, dir, bytes);
    CUresult s = cuStreamSynchronize(t.stream);
    if (t.bounce != nullptr)
        settled(t.bounce);
    return r != CUDA_SUCCESS ? r : s;
}

// Fill, copy to the device, clear, copy back, compare: the strategy moves
// the right bytes to the right places in both directions.
CUresult check_round_trip(const Target& t, uint64_t bytes, bool* match)
{
    uint32_t* w = reinterpret_cast<uint32_t*>(t.host);
    const uint64_t words = bytes / 4;
    for (uint64_t i = 0; i < words; ++i)
        w[i] = (uint32_t)(i * 2654435761u) ^ 0x5A5A0000u;
    CUresult r = copy_and_sync(t, 0, bytes);
    if (r != CUDA_SUCCESS)
        return r;
    memset(t.host, 0, bytes);
    if ((r = copy_and_sync(t, 1, bytes)) != CUDA_SUCCESS)
        return r;
    *match = true;
    for (uint64_t i = 0; i < words; ++i)
        if (w[i] != ((uint32_t)(i * 2654435761u) ^ 0x5A5A0000u)) {
            printf("bandwidth: check: word %lu is 0x%08x\n", i, w[i]);
            *match = false;
            break;
        }
    return CUDA_SUCCESS;
}

struct Measurement {
    CUresult status = CUDA_SUCCESS;
    uint64_t reps = 0, event_ns = 0, wall_ns = 0;
    unsigned attempts = 0;
};

// Repetitions, also bounded so that one measurement's SG lists fill at most
// half the pool: a pool refill waits for the device, which flushes the
// deferred batch early and would let guest work into the event span.
uint64_t reps_for(const Config& c, const Target& t, uint64_t bytes)
{
    uint64_t reps = kvmgpu::bench::reps_for(bytes, c.target, c.reps_min, c.reps_max);
    if (t.lists) {
        const uint64_t per_copy = bytes / guest_page_size() + 2;
        const uint64_t fit = c.sg_pool / 2 / per_copy;
        if (reps > fit)
            reps = fit == 0 ? 1 : fit;
    }
    return reps;
}

// One trial: `reps` copies between two events (after the cell's warm-up).
Measurement measure(const Config& c, const Target& t, unsigned dir, uint64_t bytes, CUevent start, CUevent end)
{
    Measurement m;
    m.reps = reps_for(c, t, bytes);
    // A batch flushed before its end (SG pool refill, full ring) shows as a
    // wait or a ring-full in the producer's counters: then measure again.
    for (m.attempts = 1; m.attempts <= kMaxAttempts; ++m.attempts) {
        VgpuGuestStats s0, s1;
        vgpuGetStats(&s0);
        const uint64_t t0 = tsc_begin();
        CUresult r = cuEventRecord(start, t.stream);
        for (uint64_t i = 0; i < m.reps && r == CUDA_SUCCESS; ++i)
            r = issue_copy(t, dir, bytes);
        if (r == CUDA_SUCCESS)
            r = cuEventRecord(end, t.stream);
        vgpuGetStats(&s1);
        CUresult sync = cuEventSynchronize(end);
        if (r == CUDA_SUCCESS)
            r = sync;
        if (r != CUDA_SUCCESS) {
            cuStreamSynchronize(t.stream); // clears whatever else is held
            m.status = r;
            return m;
        }
        m.wall_ns = tsc_to_ns(tsc_end() - t0);
        uint32_t bits = 0;
        if ((r = cuEventElapsedTime(reinterpret_cast<float*>(&bits), start, end)) != CUDA_SUCCESS ||
            !f32_ms_bits_to_ns(bits, &m.event_ns)) {
            m.status = r != CUDA_SUCCESS ? r : CUDA_ERROR_UNKNOWN;
            return m;
        }
        if (s1.waits == s0.waits && s1.ring_full == s0.ring_full)
            return m;
    }
    m.attempts = kMaxAttempts; // the last one stands, flush and all
    return m;
}

// One twocopy trial: `reps` transfers and a synchronize, timed by the guest
// TSC alone (event_ns stays 0): the guest's own copies are half of what
// 2-copy costs, and CUDA events would leave them out. One attempt: an
// early flush cannot let guest work into a span that holds it anyway.
Measurement measure_twocopy(const Config& c, const Target& t, unsigned dir, uint64_t bytes)
{
    Measurement m;
    m.reps = reps_for(c, t, bytes);
    m.attempts = 1;
    const uint64_t t0 = tsc_begin();
    CUresult r = CUDA_SUCCESS;
    for (uint64_t i = 0; i < m.reps && r == CUDA_SUCCESS; ++i)
        r = issue_copy(t, dir, bytes);
    const CUresult sync = cuStreamSynchronize(t.stream);
    m.wall_ns = tsc_to_ns(tsc_end() - t0);
    settled(t.bounce);
    m.status = r != CUDA_SUCCESS ? r : sync;
    return m;
}

// Runs every size and direction for one target; returns failures.
unsigned sweep_target(const Config& c, const Target& t, const char* gpages, CUevent start, CUevent end,
                      uint64_t* done, uint64_t planned)
{
    unsigned failures = 0;
    const char* strategy = t.kind != kPageable ? "none" : kSgStrategies[t.strategy].name;
    for (unsigned s = 0; s < c.nsizes; ++s) {
        const uint64_t bytes = c.sizes[s];
        if (t.kind == kPageable && !kvmgpu::bench::strategy_runs_at(kSgStrategies[t.strategy], bytes, c.slow_max))
            continue;
        for (unsigned dir = 0; dir < 2; ++dir) {
            if (!has(c.dirs, dir))
                continue;
            // One warm-up per cell (it also finds an unsupported strategy):
            // every trial then starts as warm as the one before it.
            const CUresult warm = copy_and_sync(t, dir, bytes);
            for (uint64_t trial = 1; trial <= c.trials; ++trial) {
                Measurement m;
                const bool tsc = t.kind == kTwoCopy;
                if (warm != CUDA_SUCCESS)
                    m.status = warm, m.reps = reps_for(c, t, bytes);
                else if (tsc)
                    m = measure_twocopy(c, t, dir, bytes);
                else
                    m = measure(c, t, dir, bytes, start, end);
                char buf[64];
                printf(KVMGPU_TAG_BW " dir=%s kind=%s gpages=%s strategy=%s bytes=%lu reps=%lu event_ns=%lu wall_ns=%lu "
                       "clock=%s gbps=%s attempts=%u trial=%lu/%lu n=%lu/%lu status=%s\n",
                       kDirNames[dir], kKindNames[t.kind], gpages, strategy, bytes, m.reps, m.event_ns, m.wall_ns,
                       tsc ? "tsc" : "events", decimal_ratio(bytes * m.reps, tsc ? m.wall_ns : m.event_ns, 2).text,
                       m.attempts, trial, c.trials, ++*done, planned, bench_status_text(m.status, buf, sizeof buf));
                if (m.status != CUDA_SUCCESS && m.status != CUDA_ERROR_NOT_SUPPORTED)
                    ++failures;
            }
        }
    }
    return failures;
}

} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    Config c;
    if (!parse_config(&c))
        return kExitBadCmdline;
    const char* gpages = guest_page_size() == (2u << 20) ? "2M" : "4K";
    open_device("bandwidth");
    vgpuSetDeferredSubmission(1);
    const uint64_t planned = planned_measurements(c);
    printf(KVMGPU_TAG_BW_PLAN " measurements=%lu gpages=%s max_bytes=%lu tsc_khz=%lu tsc_source=%s\n", planned, gpages,
           c.max_size, tsc_khz(), tsc_source());

    CUdeviceptr dev;
    CU_CHECK(cuMemAlloc(&dev, c.max_size));
    CUstream stream;
    CU_CHECK(cuStreamCreate(&stream, CU_STREAM_DEFAULT));
    CUevent start, end;
    CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CU_CHECK(cuEventCreate(&end, CU_EVENT_DEFAULT));

    unsigned failures = 0, mismatches = 0;
    uint64_t done = 0;
    for (unsigned kind = 0; kind < kKindCount; ++kind) {
        if (!has(c.kinds, kind))
            continue;
        const bool pinned = kind == kPinned;
        const HeapMark mark = heap_mark();
        void* host = pinned ? try_pinned_alloc(c.max_size) : try_pageable_alloc(c.max_size);
        if (host == nullptr) {
            printf("bandwidth: out of guest memory for a %lu-byte %s buffer (raise --mem)\n", c.max_size,
                   kKindNames[kind]);
            return kExitOutOfMemory;
        }
        bool lists = kind == kPageable;
        BounceRing ring{};
        if (kind == kTwoCopy) {
            for (unsigned i = 0; i < kTwoCopyBuffers; ++i) {
                ring.buf[i] = static_cast<uint8_t*>(try_pinned_alloc(kTwoCopyChunkBytes));
                if (ring.buf[i] == nullptr) {
                    printf("bandwidth: out of guest memory for twocopy's %lu-byte bounce buffers (raise --mem)\n",
                           kTwoCopyChunkBytes);
                    return kExitOutOfMemory;
                }
                CU_CHECK(cuEventCreate(&ring.done[i], CU_EVENT_DEFAULT));
            }
        }
        if (kind == kRegistered) {
            memset(host, 1, c.max_size); // resident, as a program's buffer would be
            const uint64_t t0 = tsc_begin();
            const CUresult r = cuMemHostRegister(host, c.max_size, CU_MEMHOSTREGISTER_DEVICEMAP);
            const uint64_t register_ns = tsc_to_ns(tsc_end() - t0);
            CUdeviceptr alias = 0;
            lists = r == CUDA_SUCCESS && cuMemHostGetDevicePointer(&alias, host, 0) != CUDA_SUCCESS;
            char buf[64];
            printf(KVMGPU_TAG_BW_REG " gpages=%s bytes=%lu register_ns=%lu device_address=%s status=%s\n", gpages, c.max_size,
                   register_ns, alias != 0 ? "yes" : "no", bench_status_text(r, buf, sizeof buf));
            if (r != CUDA_SUCCESS) {
                ++failures;
                heap_release(mark);
                continue;
            }
        }
        for (unsigned k = 0; k < kSgStrategyCount; ++k) {
            if (kind == kPageable && !has(c.strategies, k))
                continue;
            const Target t{static_cast<Kind>(kind), k, lists, dev, static_cast<uint8_t*>(host), stream,
                           kind == kTwoCopy ? &ring : nullptr};
            if (c.verify != 0) {
                const uint64_t v = (c.verify < c.max_size ? c.verify : c.max_size) & ~uint64_t{3};
                bool match = false;
                char buf[64];
                const CUresult r = check_round_trip(t, v, &match);
                printf(KVMGPU_TAG_BW_CHECK " kind=%s gpages=%s strategy=%s bytes=%lu status=%s\n", kKindNames[kind], gpages,
                       kind != kPageable ? "none" : kSgStrategies[k].name, v,
                       r != CUDA_SUCCESS ? bench_status_text(r, buf, sizeof buf) : match ? "ok" : "mismatch");
                if (r == CUDA_SUCCESS && !match)
                    ++mismatches;
                else if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_SUPPORTED)
                    ++failures;
            }
            failures += sweep_target(c, t, gpages, start, end, &done, planned);
            if (kind != kPageable)
                break; // one pass: pinned, registered and twocopy copies take no SG strategy
        }
        if (kind == kRegistered && cuMemHostUnregister(host) != CUDA_SUCCESS)
            ++failures;
        if (kind == kTwoCopy)
            for (unsigned i = 0; i < kTwoCopyBuffers; ++i)
                cuEventDestroy(ring.done[i]);
        heap_release(mark);
    }
    cuEventDestroy(start);
    cuEventDestroy(end);
    cuStreamDestroy(stream);
    cuMemFree(dev);
    VgpuGuestStats st;
    vgpuGetStats(&st);
    printf(KVMGPU_TAG_BW_DONE " measurements=%lu failures=%u mismatches=%u commands=%lu doorbells=%lu waits=%lu\n", done,
           failures, mismatches, st.commands, st.doorbells, st.waits);
    if (mismatches != 0)
        return kExitCheckMismatch;
    return failures != 0 ? kExitMeasurementFailed : kExitPass;
}
