// register_probe: what registering a pageable guest buffer costs and what
// each way of moving it then gives, to pick the mechanism by measurement:
//   walk    - the buffer's SG list, the device walk (as for any pageable
//             buffer);
//   alias   - a device-to-device copy from/to the buffer's device address
//             (cuMemHostGetDevicePointer: the VMM's host alias of its
//             frames), which the copy engine moves through the GPU's page
//             tables;
//   pinned  - the same copy from page-locked guest memory (the reference:
//             within 1% of native pinned, docs/results/bandwidth.md);
//   memcpy  - cuMemcpyHtoD/DtoH on the registered buffer: what a program
//             gets (the guest library's pick).
// The walk's time here includes the guest building the buffer's SG list
// (bench bandwidth's pageable rows keep that outside the events).
// Cmdline: sizes=64M,256M (each a multiple of 4 KiB), reps=5. Lines:
//   REG bytes=N register_us=.. unregister_us=..
//   REG-BW bytes=N dir=htod|dtoh way=walk|alias|pinned|memcpy gbps_x100=..
// (GB/s x 100, median of reps, CUDA events around one copy.)
#include "guest-stub/programs/program_common.h"

using namespace guest;

namespace {

constexpr uint64_t kMaxReps = 21;

// ns of one copy, by the events around it.
template <class Copy>
uint64_t timed_ns(CUevent a, CUevent b, Copy copy)
{
    CU_CHECK(cuEventRecord(a, nullptr));
    CU_CHECK(copy());
    CU_CHECK(cuEventRecord(b, nullptr));
    CU_CHECK(cuEventSynchronize(b));
    float ms = 0;
    CU_CHECK(cuEventElapsedTime(&ms, a, b));
    return static_cast<uint64_t>(ms * 1e6f);
}

} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    bool ok = true;
    const uint64_t reps = cmdline().get_u64("reps", 5, &ok);
    char buf[64];
    const char* sizes_text = cmdline().get_str("sizes", buf, sizeof buf, "64M,256M");
    uint64_t sizes[8];
    unsigned n_sizes = 0;
    for (const char* p = sizes_text; *p != 0 && n_sizes < 8;) {
        uint64_t v = 0;
        while (*p >= '0' && *p <= '9')
            v = v * 10 + static_cast<uint64_t>(*p++ - '0');
        if (*p == 'M')
            v <<= 20, ++p;
        else if (*p == 'G')
            v <<= 30, ++p;
        if (v == 0 || v % 4096 != 0)
            ok = false;
        sizes[n_sizes++] = v;
        if (*p == ',')
            ++p;
        else if (*p != 0)
            ok = false, p = "";
    }
    if (!ok || n_sizes == 0 || reps == 0 || reps > kMaxReps) {
        printf("register_probe: sizes= (e.g. 64M,256M, multiples of 4 KiB), reps= 1..%lu\n", kMaxReps);
        return kExitBadCmdline;
    }
    open_device("register_probe");
    CUevent a, b;
    CU_CHECK(cuEventCreate(&a, 0));
    CU_CHECK(cuEventCreate(&b, 0));
    for (unsigned s = 0; s < n_sizes; ++s) {
        const uint64_t bytes = sizes[s];
        const HeapMark mark = heap_mark();
        auto* pageable = static_cast<uint8_t*>(pageable_alloc(bytes));
        auto* pinned = static_cast<uint8_t*>(pinned_alloc(bytes));
        memset(pageable, 1, bytes);
        memset(pinned, 1, bytes);
        CUdeviceptr dev;
        CU_CHECK(cuMemAlloc(&dev, bytes));
        uint64_t t0 = tsc_begin();
        CU_CHECK(cuMemHostRegister(pageable, bytes, CU_MEMHOSTREGISTER_DEVICEMAP));
        const uint64_t register_ns = tsc_to_ns(tsc_end() - t0);
        CUdeviceptr alias = 0;
        const CUresult has_alias = cuMemHostGetDevicePointer(&alias, pageable, 0);
        for (int dir = 0; dir < 2; ++dir) {
            const bool htod = dir == 0;
            for (int way = 0; way < 4; ++way) {
                if (way == 1 && has_alias != CUDA_SUCCESS)
                    continue;
                uint64_t ns[kMaxReps];
                for (uint64_t r = 0; r <= reps; ++r) { // the first is a warm-up
                    const uint64_t t = timed_ns(a, b, [&] {
                        if (way == 0) // the walk, asked for by name (registered buffers go through the alias)
                            return htod ? vgpuMemcpyHtoDScattered(dev, pageable, bytes, nullptr, VGPU_SG_DEVICE_WALK)
                                        : vgpuMemcpyDtoHScattered(pageable, dev, bytes, nullptr, VGPU_SG_DEVICE_WALK);
                        if (way == 3)
                            return htod ? cuMemcpyHtoD(dev, pageable, bytes) : cuMemcpyDtoH(pageable, dev, bytes);
                        if (way == 1)
                            return htod ? cuMemcpyDtoD(dev, alias, bytes) : cuMemcpyDtoD(alias, dev, bytes);
                        return htod ? cuMemcpyHtoD(dev, pinned, bytes) : cuMemcpyDtoH(pinned, dev, bytes);
                    });
                    if (r > 0)
                        ns[r - 1] = t;
                }
                static const char* const kWays[] = {"walk", "alias", "pinned", "memcpy"};
                printf("REG-BW bytes=%lu dir=%s way=%s gbps_x100=%lu\n", bytes, htod ? "htod" : "dtoh", kWays[way],
                       bytes * 100 / median_u64(ns, reps));
            }
        }
        t0 = tsc_begin();
        CU_CHECK(cuMemHostUnregister(pageable));
        const uint64_t unregister_ns = tsc_to_ns(tsc_end() - t0);
        printf("REG bytes=%lu register_us=%lu unregister_us=%lu alias=%s\n", bytes, register_ns / 1000,
               unregister_ns / 1000, has_alias == CUDA_SUCCESS ? "yes" : "no");
        CU_CHECK(cuMemFree(dev));
        heap_release(mark);
    }
    printf("register_probe: PASS\n");
    return kExitPass;
}
