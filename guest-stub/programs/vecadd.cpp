// vecadd: c = a + b on the vGPU for float vectors of n elements (cmdline
// n=, default 1<<20) in pinned host memory (host_mem=pageable for the
// scatter-gather path), checked against the same sum on the guest CPU.
// Exits 0 only if every element matches within a relative error of 1e-6.
#include "guest-stub/programs/program_common.h"

using namespace guest;

int guest_main(const kvmgpu_boot_info*)
{
    bool ok = true;
    const uint64_t n = cmdline().get_u64("n", 1u << 20, &ok);
    if (!ok || n == 0 || n > (1ull << 28)) {
        printf("vecadd: n must be in [1, 2^28]\n");
        return kExitBadCmdline;
    }
    const bool pageable = want_pageable_host_memory();
    const size_t bytes = n * sizeof(float);

    CU_CHECK(cuInit(0));
    print_device_banner("vecadd");
    CUmodule mod;
    CUfunction fn = load_kernel("vecadd", "vector_add", &mod);

    float* a = random_floats(n, pageable, boot_info().seed ^ 0xa);
    float* b = random_floats(n, pageable, boot_info().seed ^ 0xb);
    auto* c = static_cast<float*>(host_alloc(bytes, pageable));
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

    uint64_t bad = 0;
    double worst = 0.0;
    for (uint64_t i = 0; i < n; ++i) {
        double ref = (double)a[i] + (double)b[i];
        double err = abs_d((double)c[i] - ref) / (abs_d(ref) > 1e-30 ? abs_d(ref) : 1e-30);
        if (err > worst)
            worst = err;
        if (!(err <= 1e-6)) {
            if (bad < 5)
                printf("vecadd: c[%lu] = %.9g, expected %.9g\n", i, (double)c[i], ref);
            ++bad;
        }
    }
    double h2d = tsc_to_seconds(t1 - t0), kern = tsc_to_seconds(t2 - t1), d2h = tsc_to_seconds(t3 - t2);
    printf("vecadd: n=%lu (%s) alloc+htod %.3f ms (%.2f GB/s), kernel+sync %.3f ms, dtoh %.3f ms (%.2f GB/s)\n",
           n, pageable ? "pageable" : "pinned", h2d * 1e3, h2d > 0 ? 2.0 * bytes / h2d / 1e9 : 0.0,
           kern * 1e3, d2h * 1e3, d2h > 0 ? bytes / d2h / 1e9 : 0.0);

    CU_CHECK(cuMemFree(da));
    CU_CHECK(cuMemFree(db));
    CU_CHECK(cuMemFree(dc));
    CU_CHECK(cuModuleUnload(mod));
    if (bad != 0) {
        printf("vecadd: FAIL: %lu of %lu elements differ (max rel err %.3g)\n", bad, n, worst);
        return kExitResultMismatch;
    }
    printf("vecadd: PASS (max rel err %.3g)\n", worst);
    return kExitPass;
}
