// vecadd: c = a + b on the vGPU for float vectors of n elements (cmdline
// n=, default 1<<16) in pinned host memory (host_mem=pageable for the
// scatter-gather path), checked against the guest CPU's own float sums.
// Both round one IEEE-754 addition to nearest, so they must agree bit for bit.
#include "guest-stub/programs/program_common.h"

using namespace guest;

int guest_main(const kvmgpu_boot_info*)
{
    bool ok = true;
    const uint64_t n = cmdline().get_u64("n", 1u << 16, &ok);
    if (!ok || n == 0 || n > (1ull << 28)) {
        printf("vecadd: n must be in [1, 2^28]\n");
        return kExitBadCmdline;
    }
    const bool pageable = want_pageable_host_memory();
    const size_t bytes = n * sizeof(float);
    const uint64_t seed_a = boot_info().seed ^ 0xa, seed_b = boot_info().seed ^ 0xb;

    open_device("vecadd");
    CUmodule mod;
    CUfunction fn = load_kernel("vecadd", "vector_add", &mod);

    auto* a = static_cast<float*>(host_alloc(bytes, pageable));
    auto* b = static_cast<float*>(host_alloc(bytes, pageable));
    auto* c = static_cast<float*>(host_alloc(bytes, pageable));
    RandomFloats ra(seed_a), rb(seed_b);
    for (uint64_t i = 0; i < n; ++i) {
        a[i] = ra.next();
        b[i] = rb.next();
    }
    memset(c, 0, bytes);

    CUdeviceptr dc;
    CU_CHECK(cuMemAlloc(&dc, bytes));
    uint64_t t0 = tsc_begin();
    CUdeviceptr da = device_copy_of(a, bytes);
    CUdeviceptr db = device_copy_of(b, bytes);
    uint64_t t1 = tsc_end();
    unsigned n32 = static_cast<unsigned>(n);
    void* params[] = {&da, &db, &dc, &n32};
    const unsigned block = 256;
    const unsigned grid = static_cast<unsigned>((n + block - 1) / block);
    CU_CHECK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params, nullptr));
    CU_CHECK(cuCtxSynchronize());
    uint64_t t2 = tsc_end();
    CU_CHECK(cuMemcpyDtoH(c, dc, bytes));
    uint64_t t3 = tsc_end();

    // The inputs again from their seeds (a and b may be device-mapped pages
    // the copy left alone, but regenerating them checks those too).
    ra = RandomFloats(seed_a);
    rb = RandomFloats(seed_b);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const float want = ra.next() + rb.next();
        if (c[i] != want) {
            if (bad < 5)
                printf("vecadd: c[%lu] = %.9g, expected %.9g\n", i, (double)c[i], (double)want);
            ++bad;
        }
    }
    const uint64_t h2d = tsc_to_ns(t1 - t0), kern = tsc_to_ns(t2 - t1), d2h = tsc_to_ns(t3 - t2);
    printf("vecadd: n=%lu (%s) alloc+htod %s ms (%s GB/s), kernel+sync %s ms, dtoh %s ms (%s GB/s)\n",
           n, pageable ? "pageable" : "pinned", ms_text(h2d).text, giga_per_s_text(2 * bytes, h2d).text,
           ms_text(kern).text, ms_text(d2h).text, giga_per_s_text(bytes, d2h).text);

    CU_CHECK(cuMemFree(da));
    CU_CHECK(cuMemFree(db));
    CU_CHECK(cuMemFree(dc));
    CU_CHECK(cuModuleUnload(mod));
    if (bad != 0) {
        printf("vecadd: FAIL: %lu of %lu sums differ\n", bad, n);
        return kExitResultMismatch;
    }
    printf("vecadd: PASS (all %lu float sums equal the CPU's)\n", n);
    return kExitPass;
}
