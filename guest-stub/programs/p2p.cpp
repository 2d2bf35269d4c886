// p2p: copies between the VM's devices, in the manner of NVIDIA's
// p2pBandwidthLatencyTest, for `kvmtool-gpu bench p2p`. For every ordered
// pair (src, dst) of devices, peer access off and then on (where
// cuDeviceCanAccessPeer allows; the diagonal needs none):
//   uni  - reps cuMemcpyPeerAsync of src's buffer into dst's, on a stream
//          of src's context, between two CUDA events (p2p_rules.h: reps);
//   bidi - the same at once the other way, on a second stream (both
//          directions' bytes count);
//   lat  - iters one-word copies: each copy + cuStreamSynchronize timed by
//          the TSC (round trip), and all iters between events (GPU time).
// Cmdline: sizes=4K,64K,... (default 4K,64K,1M), trials=N (default 1),
// iters=N (latency copies, default 1000), access=off,on (default both).
// Output, one line per trial (the host takes medians):
//   p2p: kind=uni access=off src=0 dst=1 bytes=4096 reps=200 trial=0 event_ns=... status=ok
//   p2p: kind=lat access=on src=0 dst=1 bytes=4 iters=1000 trial=0 event_ns=... wall_ns=... status=ok
// and per pair: p2p: kind=peer src=0 dst=1 can=1
#include "guest-stub/programs/bench_guest.h"
#include "guest-stub/programs/bench_support.h"
#include "guest-stub/programs/program_common.h"
#include "kvmtool-gpu/abi/console_tags.h"
#include "kvmtool-gpu/abi/p2p_rules.h"

using namespace guest;
using kvmgpu::bench::kP2pMaxBytes;
using kvmgpu::bench::kP2pMaxDevices;
using kvmgpu::bench::kP2pMaxLatencyIters;
using kvmgpu::bench::kP2pMaxSizes;
using kvmgpu::bench::kP2pMaxTrials;
using kvmgpu::bench::p2p_reps;

namespace {

struct Device {
    CUcontext ctx = nullptr;
    CUdevice dev = 0;
    CUdeviceptr buf[2] = {}; // [0] is read from, [1] written to
    CUstream stream[2] = {};
    CUevent start = nullptr, mid = nullptr, end = nullptr;
};

Device g_dev[kP2pMaxDevices];
int g_count = 0;

void use(int d) { CU_CHECK(cuCtxSetCurrent(g_dev[d].ctx)); }

// Event time between start and end of device d, or the failure.
CUresult elapsed_ns(const Device& d, uint64_t* ns)
{
    uint32_t bits = 0;
    CUresult r = cuEventSynchronize(d.end);
    if (r == CUDA_SUCCESS)
        r = cuEventElapsedTime(reinterpret_cast<float*>(&bits), d.start, d.end);
    if (r == CUDA_SUCCESS && !f32_ms_bits_to_ns(bits, ns))
        r = CUDA_ERROR_INVALID_VALUE;
    return r;
}

// reps copies src -> dst (and dst -> src at once when bidi), on src's streams.
CUresult copy_between(int src, int dst, uint64_t bytes, uint64_t reps, bool bidi, uint64_t* ns)
{
    Device& s = g_dev[src];
    Device& d = g_dev[dst];
    use(src);
    CUresult r = cuEventRecord(s.start, s.stream[0]);
    if (r == CUDA_SUCCESS && bidi)
        r = cuStreamWaitEvent(s.stream[1], s.start, 0);
    for (uint64_t i = 0; r == CUDA_SUCCESS && i < reps; ++i) {
        r = cuMemcpyPeerAsync(d.buf[1], d.ctx, s.buf[0], s.ctx, bytes, s.stream[0]);
        if (r == CUDA_SUCCESS && bidi)
            r = cuMemcpyPeerAsync(s.buf[1], s.ctx, d.buf[0], d.ctx, bytes, s.stream[1]);
    }
    if (r == CUDA_SUCCESS && bidi) {
        r = cuEventRecord(s.mid, s.stream[1]);
        if (r == CUDA_SUCCESS)
            r = cuStreamWaitEvent(s.stream[0], s.mid, 0);
    }
    if (r == CUDA_SUCCESS)
        r = cuEventRecord(s.end, s.stream[0]);
    if (r == CUDA_SUCCESS)
        r = elapsed_ns(s, ns);
    return r;
}

// One-word copies: round trips by the TSC, then iters queued between events.
CUresult latency(int src, int dst, uint64_t iters, uint64_t* wall_ns, uint64_t* event_ns)
{
    Device& s = g_dev[src];
    Device& d = g_dev[dst];
    use(src);
    CUresult r = CUDA_SUCCESS;
    const uint64_t t0 = tsc_begin();
    for (uint64_t i = 0; r == CUDA_SUCCESS && i < iters; ++i) {
        r = cuMemcpyPeerAsync(d.buf[1], d.ctx, s.buf[0], s.ctx, 4, s.stream[0]);
        if (r == CUDA_SUCCESS)
            r = cuStreamSynchronize(s.stream[0]);
    }
    *wall_ns = tsc_to_ns(tsc_end() - t0);
    if (r == CUDA_SUCCESS)
        r = cuEventRecord(s.start, s.stream[0]);
    for (uint64_t i = 0; r == CUDA_SUCCESS && i < iters; ++i)
        r = cuMemcpyPeerAsync(d.buf[1], d.ctx, s.buf[0], s.ctx, 4, s.stream[0]);
    if (r == CUDA_SUCCESS)
        r = cuEventRecord(s.end, s.stream[0]);
    if (r == CUDA_SUCCESS)
        r = elapsed_ns(s, event_ns);
    return r;
}

// Peer access between src and dst both ways, on or off; false when the
// devices cannot (the diagonal always can: it needs none).
bool set_access(int src, int dst, bool on)
{
    if (src == dst)
        return true;
    int can_sd = 0, can_ds = 0;
    CU_CHECK(cuDeviceCanAccessPeer(&can_sd, g_dev[src].dev, g_dev[dst].dev));
    CU_CHECK(cuDeviceCanAccessPeer(&can_ds, g_dev[dst].dev, g_dev[src].dev));
    if (on && !(can_sd && can_ds))
        return false;
    const int pairs[2][2] = {{src, dst}, {dst, src}};
    for (const auto& p : pairs) {
        use(p[0]);
        const CUresult r = on ? cuCtxEnablePeerAccess(g_dev[p[1]].ctx, 0) : cuCtxDisablePeerAccess(g_dev[p[1]].ctx);
        if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED && r != CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) {
            char b[64];
            printf(KVMGPU_TAG_P2P " peer access %s from device %d to %d: %s\n", on ? "on" : "off", p[0], p[1],
                   bench_status_text(r, b, sizeof b));
            return false;
        }
    }
    return true;
}

} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    bool ok = true;
    uint64_t sizes[kP2pMaxSizes];
    unsigned n_sizes = 0;
    ok &= parse_size_list(cmdline_value_or("sizes", "4K,64K,1M"), sizes, kP2pMaxSizes, &n_sizes);
    const uint64_t trials = cmdline().get_u64("trials", 1, &ok);
    const uint64_t iters = cmdline().get_u64("iters", 1000, &ok);
    static const char* const kAccess[] = {"off", "on"};
    uint32_t access_mask = 0;
    ok &= parse_name_mask(cmdline_value_or("access", "off,on"), kAccess, 2, &access_mask);
    uint64_t max_bytes = 0;
    for (unsigned i = 0; ok && i < n_sizes; ++i) {
        ok &= sizes[i] <= kP2pMaxBytes && sizes[i] % 4 == 0;
        max_bytes = sizes[i] > max_bytes ? sizes[i] : max_bytes;
    }
    if (!ok || trials == 0 || trials > kP2pMaxTrials || iters == 0 || iters > kP2pMaxLatencyIters) {
        printf(KVMGPU_TAG_P2P " sizes (multiples of 4 up to 1G), trials in [1, %u], iters in [1, %lu], access off,on\n",
               kP2pMaxTrials, kP2pMaxLatencyIters);
        return kExitBadCmdline;
    }
    CU_CHECK(cuInit(0));
    CU_CHECK(cuDeviceGetCount(&g_count));
    if (g_count < 1 || g_count > (int)kP2pMaxDevices) {
        printf(KVMGPU_TAG_P2P " %d devices: expected 1 to %u\n", g_count, kP2pMaxDevices);
        return kExitBadCmdline;
    }
    for (int d = 0; d < g_count; ++d) {
        Device& x = g_dev[d];
        CU_CHECK(cuDeviceGet(&x.dev, d));
        CU_CHECK(cuCtxCreate(&x.ctx, nullptr, 0, x.dev));
        for (int b = 0; b < 2; ++b) {
            CU_CHECK(cuMemAlloc(&x.buf[b], max_bytes));
            CU_CHECK(cuMemsetD8(x.buf[b], (unsigned char)(d * 2 + b + 1), max_bytes));
            CU_CHECK(cuStreamCreate(&x.stream[b], CU_STREAM_NON_BLOCKING));
        }
        CU_CHECK(cuEventCreate(&x.start, CU_EVENT_DEFAULT));
        CU_CHECK(cuEventCreate(&x.mid, CU_EVENT_DEFAULT));
        CU_CHECK(cuEventCreate(&x.end, CU_EVENT_DEFAULT));
    }
    use(0);
    print_device_banner("p2p");
    printf(KVMGPU_TAG_P2P " %d device(s), %u sizes up to %lu bytes, %lu trial(s), %lu latency copies\n", g_count, n_sizes,
           max_bytes, trials, iters);
    for (int s = 0; s < g_count; ++s)
        for (int d = 0; d < g_count; ++d) {
            int can = 0;
            if (s != d)
                CU_CHECK(cuDeviceCanAccessPeer(&can, g_dev[s].dev, g_dev[d].dev));
            printf(KVMGPU_TAG_P2P " kind=peer src=%d dst=%d can=%d\n", s, d, can);
        }

    bool all_ok = true;
    char sb[64];
    for (int a = 0; a < 2; ++a) {
        if (!(access_mask & (1u << a)))
            continue;
        for (int s = 0; s < g_count; ++s)
            for (int d = 0; d < g_count; ++d) {
                // Off is measured first, with nothing enabled yet; each "on" is undone after it.
                if (a == 1 && !set_access(s, d, true))
                    continue; // no peer access: the host reports "on" as n/a
                for (unsigned i = 0; i < n_sizes; ++i)
                    for (int bidi = 0; bidi < 2; ++bidi)
                        for (uint64_t t = 0; t < trials; ++t) {
                            uint64_t ns = 0;
                            const uint64_t reps = p2p_reps(sizes[i]);
                            const CUresult r = copy_between(s, d, sizes[i], reps, bidi != 0, &ns);
                            all_ok &= r == CUDA_SUCCESS;
                            printf(KVMGPU_TAG_P2P " kind=%s access=%s src=%d dst=%d bytes=%lu reps=%lu trial=%lu event_ns=%lu "
                                   "status=%s\n",
                                   bidi ? "bidi" : "uni", kAccess[a], s, d, sizes[i], reps, t, ns,
                                   bench_status_text(r, sb, sizeof sb));
                        }
                for (uint64_t t = 0; t < trials; ++t) {
                    uint64_t wall = 0, ev = 0;
                    const CUresult r = latency(s, d, iters, &wall, &ev);
                    all_ok &= r == CUDA_SUCCESS;
                    printf(KVMGPU_TAG_P2P " kind=lat access=%s src=%d dst=%d bytes=4 iters=%lu trial=%lu event_ns=%lu "
                           "wall_ns=%lu status=%s\n",
                           kAccess[a], s, d, iters, t, ev, wall, bench_status_text(r, sb, sizeof sb));
                }
                if (a == 1)
                    set_access(s, d, false);
            }
    }
    printf(KVMGPU_TAG_P2P " %s\n", all_ok ? "PASS (every copy completed)" : "FAIL (a copy failed: see status=)");
    return all_ok ? kExitPass : kExitResultMismatch;
}
