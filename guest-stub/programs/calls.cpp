// calls: what one virtual CUDA call costs, for `kvmtool-gpu bench calls`
// (which boots it once per doorbell: trap, ioeventfd, poll). For each
// batching setting (deferred submission off / on) it measures:
//   launch          n asynchronous empty-kernel launches, then one synchronize
//   loop            n x (an async copy of copy_bytes from pinned memory, then a
//                   launch): the loop case of deferred submission
//   sync_launch     iters x (launch + cuStreamSynchronize): a round trip
//   sync_copy_htod  iters x cuMemcpyHtoD of copy_bytes (synchronous)
//   sync_copy_dtoh  iters x cuMemcpyDtoH of copy_bytes (synchronous)
//   wake_launch     wakes x (a pause of pause_ms, then launch + synchronize):
//                   the round trip to a consumer that has gone to sleep; the
//                   pause is not timed (wall and event spans cover the calls)
//   graph_launch    n asynchronous launches of one graph (a chain of
//                   graph_chain empty kernels captured from the stream once),
//                   then one synchronize
//   alloc_async     iters x (cuMemAllocAsync of 1 MiB + cuMemFreeAsync +
//                   cuStreamSynchronize): the stream-ordered allocator's
//                   round trip
//   managed_launch  iters x (launch + cuStreamSynchronize) while the context
//                   holds 16 MiB of managed memory: under the guest's
//                   emulation each launch moves it to the device and back
// and prints one line per (metric, batching), the median of `reps` runs:
//   CALLS metric=launch batching=on calls=1000 reps=5 event_ns=... wall_ns=... wall_min_ns=... wall_p90_ns=...
//         doorbells=1 waits=1 status=ok
// event_ns: GPU time between events recorded on the stream before the first
//   and after the last call; wall_ns: guest TSC from before the first call
//   to after the synchronize (guest instructions included: emulator time
//   where KVM emulates guest code). doorbells/waits: the guest producer's
//   counters for that run (a doorbell is a VM exit with the trap doorbell).
// Then, with idle_s > 0, it idles (spins on the TSC, no vGPU call) for
// idle_s seconds between the lines CALLS-IDLE and CALLS-IDLE-DONE, while
// the VMM measures the CPU its own threads and the GPU worker use.
//
// Cmdline: n=1000 iters=200 copy_bytes=8 reps=5 batching=off,on wakes=20
//          pause_ms=10 idle_s=10
// Exit: 0 when every measurement ran or was not offered (managed memory on
// a backend without it: its row says not_supported); 2 when one failed; 64
// set-up failed.
#include <string.h>

#include "guest-stub/programs/bench_guest.h"
#include "guest-stub/programs/bench_support.h"
#include "guest-stub/programs/program_common.h"
#include "kvmtool-gpu/abi/console_tags.h"

using namespace guest;

namespace {

constexpr uint32_t kExitMeasurementFailed = 2;
constexpr unsigned kMaxReps = 15;
const char* const kBatching[] = {"off", "on"};

enum Metric : unsigned {
    kLaunch,
    kLoop,
    kSyncLaunch,
    kSyncCopyHtoD,
    kSyncCopyDtoH,
    kWakeLaunch,
    kGraphLaunch,
    kAllocAsync,
    kManagedLaunch,
    kMetricCount
};
const char* const kMetricNames[] = {"launch",         "loop",           "sync_launch", "sync_copy_htod",
                                    "sync_copy_dtoh", "wake_launch", "graph_launch", "alloc_async",
                                    "managed_launch"};
constexpr unsigned kGraphChain = 8;             // as kvmtool-gpu/bench/calls_plan.h
constexpr uint64_t kAllocAsyncBytes = 1 << 20; // as kvmtool-gpu/bench/calls_plan.h
constexpr uint64_t kManagedBytes = 16 << 20;    // as kvmtool-gpu/bench/calls_plan.h

struct Setup {
    CUfunction empty;
    CUstream stream;
    CUevent start, end;
    CUdeviceptr dev;
    void* pinned;
    CUgraphExec chain; // kGraphChain empty kernels
    uint64_t n, iters, copy_bytes, reps, wakes, pause_ms;
};

struct Run {
    CUresult status = CUDA_SUCCESS;
    uint64_t event_ns = 0, wall_ns = 0, doorbells = 0, waits = 0;
};

CUresult launch_empty(const Setup& s)
{
    return cuLaunchKernel(s.empty, 1, 1, 1, 1, 1, 1, 0, s.stream, nullptr, nullptr);
}

// One call (or loop iteration) of a metric.
CUresult one_call(const Setup& s, unsigned metric)
{
    switch (metric) {
    case kLaunch:
        return launch_empty(s);
    case kLoop: {
        CUresult r = cuMemcpyHtoDAsync(s.dev, s.pinned, s.copy_bytes, s.stream);
        return r != CUDA_SUCCESS ? r : launch_empty(s);
    }
    case kSyncLaunch:
    case kManagedLaunch: {
        CUresult r = launch_empty(s);
        return r != CUDA_SUCCESS ? r : cuStreamSynchronize(s.stream);
    }
    case kSyncCopyHtoD:
        return cuMemcpyHtoD(s.dev, s.pinned, s.copy_bytes);
    case kGraphLaunch:
        return cuGraphLaunch(s.chain, s.stream);
    case kAllocAsync: {
        CUdeviceptr p = 0;
        CUresult r = cuMemAllocAsync(&p, kAllocAsyncBytes, s.stream);
        if (r == CUDA_SUCCESS)
            r = cuMemFreeAsync(p, s.stream);
        return r != CUDA_SUCCESS ? r : cuStreamSynchronize(s.stream);
    }
    default:
        return cuMemcpyDtoH(s.pinned, s.dev, s.copy_bytes);
    }
}

uint64_t calls_of(const Setup& s, unsigned metric)
{
    return metric <= kLoop || metric == kGraphLaunch ? s.n : metric == kWakeLaunch ? s.wakes : s.iters;
}

void spin_ms(uint64_t ms)
{
    const uint64_t until = tsc_begin() + ms * tsc_khz();
    while (tsc_begin() < until)
        asm volatile("pause");
}

// wake_launch: each round trip after a pause, timed alone (TSC and events).
Run run_wakes(const Setup& s)
{
    Run run;
    VgpuGuestStats a, b;
    vgpuGetStats(&a);
    CUresult r = CUDA_SUCCESS;
    for (uint64_t i = 0; i < s.wakes && r == CUDA_SUCCESS; ++i) {
        spin_ms(s.pause_ms);
        const uint64_t t0 = tsc_begin();
        r = cuEventRecord(s.start, s.stream);
        if (r == CUDA_SUCCESS)
            r = launch_empty(s);
        if (r == CUDA_SUCCESS)
            r = cuEventRecord(s.end, s.stream);
        const CUresult sync = cuStreamSynchronize(s.stream);
        run.wall_ns += tsc_to_ns(tsc_end() - t0);
        if (r == CUDA_SUCCESS)
            r = sync;
        uint32_t bits = 0;
        uint64_t ns = 0;
        if (r == CUDA_SUCCESS)
            r = cuEventElapsedTime(reinterpret_cast<float*>(&bits), s.start, s.end);
        if (r == CUDA_SUCCESS && !f32_ms_bits_to_ns(bits, &ns))
            r = CUDA_ERROR_UNKNOWN;
        run.event_ns += ns;
    }
    vgpuGetStats(&b);
    run.doorbells = b.doorbells - a.doorbells;
    run.waits = b.waits - a.waits;
    run.status = r;
    return run;
}

Run run_timed(const Setup& s, unsigned metric);

Run run_once(const Setup& s, unsigned metric)
{
    if (metric == kWakeLaunch)
        return run_wakes(s);
    if (metric != kManagedLaunch)
        return run_timed(s, metric);
    // Managed memory only for this metric: it changes every launch.
    CUdeviceptr m = 0;
    Run run;
    if ((run.status = cuMemAllocManaged(&m, kManagedBytes, CU_MEM_ATTACH_GLOBAL)) != CUDA_SUCCESS)
        return run;
    memset(reinterpret_cast<void*>(m), 1, kManagedBytes); // the CPU's, as a program's would be
    run = run_timed(s, metric);
    const CUresult freed = cuMemFree(m);
    if (run.status == CUDA_SUCCESS)
        run.status = freed;
    return run;
}

Run run_timed(const Setup& s, unsigned metric)
{
    Run run;
    const uint64_t calls = calls_of(s, metric);
    VgpuGuestStats a, b;
    vgpuGetStats(&a);
    const uint64_t t0 = tsc_begin();
    CUresult r = cuEventRecord(s.start, s.stream);
    for (uint64_t i = 0; i < calls && r == CUDA_SUCCESS; ++i)
        r = one_call(s, metric);
    if (r == CUDA_SUCCESS)
        r = cuEventRecord(s.end, s.stream);
    const CUresult sync = cuStreamSynchronize(s.stream);
    run.wall_ns = tsc_to_ns(tsc_end() - t0);
    vgpuGetStats(&b);
    run.doorbells = b.doorbells - a.doorbells;
    run.waits = b.waits - a.waits;
    if (r == CUDA_SUCCESS)
        r = sync;
    uint32_t bits = 0;
    if (r == CUDA_SUCCESS)
        r = cuEventElapsedTime(reinterpret_cast<float*>(&bits), s.start, s.end);
    if (r == CUDA_SUCCESS && !f32_ms_bits_to_ns(bits, &run.event_ns))
        r = CUDA_ERROR_UNKNOWN;
    run.status = r;
    return run;
}

// Sorts runs by wall time (insertion sort: a handful of entries).
void sort_by_wall(Run* runs, unsigned n)
{
    for (unsigned i = 1; i < n; ++i)
        for (unsigned j = i; j > 0 && runs[j].wall_ns < runs[j - 1].wall_ns; --j) {
            Run t = runs[j];
            runs[j] = runs[j - 1];
            runs[j - 1] = t;
        }
}

// Median of reps runs (by wall time; its event time and counters go with
// it), after one unreported warm-up run, with the fastest run's and the
// 90th percentile's (nearest rank) wall times. The first failure ends it.
struct Measured {
    Run median;
    uint64_t wall_min_ns, wall_p90_ns;
};
Measured measure(const Setup& s, unsigned metric)
{
    Run runs[kMaxReps];
    Run warm = run_once(s, metric);
    if (warm.status != CUDA_SUCCESS)
        return {warm, 0, 0};
    for (unsigned i = 0; i < s.reps; ++i) {
        runs[i] = run_once(s, metric);
        if (runs[i].status != CUDA_SUCCESS)
            return {runs[i], 0, 0};
    }
    sort_by_wall(runs, (unsigned)s.reps);
    const uint64_t p90 = (s.reps * 90 + 99) / 100 - 1;
    return {runs[s.reps / 2], runs[0].wall_ns, runs[p90].wall_ns};
}

} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    Setup s;
    bool ok = true;
    const Cmdline& cl = cmdline();
    s.n = cl.get_u64("n", 1000, &ok);
    s.iters = cl.get_u64("iters", 200, &ok);
    s.copy_bytes = cl.get_u64("copy_bytes", 8, &ok);
    s.reps = cl.get_u64("reps", 5, &ok);
    s.wakes = cl.get_u64("wakes", 20, &ok);
    s.pause_ms = cl.get_u64("pause_ms", 10, &ok);
    const uint64_t idle_s = cl.get_u64("idle_s", 10, &ok);
    uint32_t batching = 0;
    if (!ok || s.n == 0 || s.iters == 0 || s.copy_bytes == 0 || s.copy_bytes > 4096 || s.reps == 0 ||
        s.reps > kMaxReps || s.wakes == 0 || s.pause_ms > 10000 || idle_s > 3600 ||
        !parse_name_mask(cmdline_value_or("batching", "off,on"), kBatching, 2, &batching)) {
        printf("calls: n, iters, wakes >= 1; copy_bytes 1..4096; reps 1..%u; pause_ms <= 10000; idle_s <= 3600; "
               "batching a list of off,on\n",
               kMaxReps);
        return kExitBadCmdline;
    }

    open_device("calls");
    CUmodule module;
    s.empty = load_kernel("calls", "empty_kernel", &module);
    CU_CHECK(cuStreamCreate(&s.stream, CU_STREAM_DEFAULT));
    CU_CHECK(cuEventCreate(&s.start, CU_EVENT_DEFAULT));
    CU_CHECK(cuEventCreate(&s.end, CU_EVENT_DEFAULT));
    CU_CHECK(cuMemAlloc(&s.dev, 4096));
    CU_CHECK(cuMemAllocHost(&s.pinned, 4096));
    memset(s.pinned, 0x5A, 4096);
    CUgraph chain;
    CU_CHECK(cuStreamBeginCapture(s.stream, CU_STREAM_CAPTURE_MODE_RELAXED));
    for (unsigned i = 0; i < kGraphChain; ++i)
        CU_CHECK(launch_empty(s));
    CU_CHECK(cuStreamEndCapture(s.stream, &chain));
    CU_CHECK(cuGraphInstantiate(&s.chain, chain, 0));
    CU_CHECK(cuGraphDestroy(chain));
    VgpuGuestInfo vi;
    CU_CHECK(vgpuGetInfo(&vi));
    const uint64_t planned = (uint64_t)kMetricCount * ((batching & 1u) + ((batching >> 1) & 1u));
    printf(KVMGPU_TAG_CALLS_PLAN " measurements=%lu doorbell=%u n=%lu iters=%lu copy_bytes=%lu reps=%lu tsc_khz=%lu "
           "tsc_source=%s\n",
           planned, vi.doorbell_mode, s.n, s.iters, s.copy_bytes, s.reps, tsc_khz(), tsc_source());

    unsigned failures = 0;
    uint64_t done = 0;
    for (unsigned b = 0; b < 2; ++b) {
        if (((batching >> b) & 1u) == 0)
            continue;
        vgpuSetDeferredSubmission((int)b);
        for (unsigned m = 0; m < kMetricCount; ++m) {
            // The wake-ups' price: the VMM measures its and the worker's CPU
            // between these lines (a consumer that polls through the pauses).
            if (m == kWakeLaunch)
                printf(KVMGPU_TAG_CALLS_CPU_BEGIN "\n");
            const Measured measured = measure(s, m);
            const Run& r = measured.median;
            if (m == kWakeLaunch)
                printf(KVMGPU_TAG_CALLS_CPU_END " metric=%s batching=%s\n", kMetricNames[m], kBatching[b]);
            char buf[64];
            printf(KVMGPU_TAG_CALLS " metric=%s batching=%s calls=%lu reps=%lu event_ns=%lu wall_ns=%lu wall_min_ns=%lu "
                   "wall_p90_ns=%lu doorbells=%lu waits=%lu n=%lu/%lu status=%s\n",
                   kMetricNames[m], kBatching[b], calls_of(s, m), s.reps, r.event_ns, r.wall_ns, measured.wall_min_ns,
                   measured.wall_p90_ns, r.doorbells, r.waits, ++done, planned,
                   bench_status_text(r.status, buf, sizeof buf));
            if (r.status != CUDA_SUCCESS && r.status != CUDA_ERROR_NOT_SUPPORTED) // not offered: its row says so
                ++failures;
        }
    }
    vgpuSetDeferredSubmission(0);
    if (idle_s > 0) {
        printf(KVMGPU_TAG_CALLS_IDLE " seconds=%lu\n", idle_s);
        const uint64_t t0 = tsc_begin();
        spin_ms(idle_s * 1000);
        printf(KVMGPU_TAG_CALLS_IDLE_DONE " wall_ns=%lu\n", tsc_to_ns(tsc_end() - t0));
    }
    CU_CHECK(cuModuleUnload(module));
    printf(KVMGPU_TAG_CALLS_DONE " measurements=%lu failures=%u\n", done, failures);
    return failures != 0 ? kExitMeasurementFailed : kExitPass;
}
