// matmul: c = a * b on the vGPU for square row-major n x n float matrices
// (cmdline n=, default 256), checked against a double-precision product on
// the guest CPU: |c - ref| <= 1e-5 * sum_k |a_ik * b_kj| + 1e-30 per element.
#include "guest-stub/programs/program_common.h"

using namespace guest;

int guest_main(const kvmgpu_boot_info*)
{
    bool ok = true;
    const uint64_t n = cmdline().get_u64("n", 256, &ok);
    if (!ok || n == 0 || n > 4096) {
        printf("matmul: n must be in [1, 4096]\n");
        return kExitBadCmdline;
    }
    const bool pageable = want_pageable_host_memory();
    const size_t bytes = n * n * sizeof(float);

    CU_CHECK(cuInit(0));
    print_device_banner("matmul");
    CUmodule mod;
    CUfunction fn = load_kernel("matmul", "matmul", &mod);

    float* a = random_floats(n * n, pageable, boot_info().seed ^ 0x3a7a);
    float* b = random_floats(n * n, pageable, boot_info().seed ^ 0x3a7b);
    auto* c = static_cast<float*>(host_alloc(bytes, pageable));
    memset(c, 0, bytes);
    CUdeviceptr da = device_copy_of(a, bytes);
    CUdeviceptr db = device_copy_of(b, bytes);
    CUdeviceptr dc;
    CU_CHECK(cuMemAlloc(&dc, bytes));

    unsigned n32 = static_cast<unsigned>(n);
    void* params[] = {&da, &db, &dc, &n32};
    const unsigned tile = 16, grid = static_cast<unsigned>((n + tile - 1) / tile);
    uint64_t t0 = tsc_begin();
    CU_CHECK(cuLaunchKernel(fn, grid, grid, 1, tile, tile, 1, 0, 0, params, nullptr));
    CU_CHECK(cuCtxSynchronize());
    uint64_t t1 = tsc_end();
    CU_CHECK(cuMemcpyDtoH(c, dc, bytes));

    uint64_t bad = 0;
    double worst = 0.0;
    for (uint64_t i = 0; i < n; ++i) {
        for (uint64_t j = 0; j < n; ++j) {
            double ref = 0.0, mag = 0.0;
            for (uint64_t k = 0; k < n; ++k) {
                double p = (double)a[i * n + k] * (double)b[k * n + j];
                ref += p;
                mag += abs_d(p);
            }
            double err = abs_d((double)c[i * n + j] - ref) / (mag + 1e-30);
            if (err > worst)
                worst = err;
            if (!(err <= 1e-5)) {
                if (bad < 5)
                    printf("matmul: c[%lu][%lu] = %.9g, expected %.9g\n", i, j, (double)c[i * n + j], ref);
                ++bad;
            }
        }
    }
    double secs = tsc_to_seconds(t1 - t0);
    printf("matmul: n=%lu kernel+sync %.3f ms (%.2f GFLOP/s)\n", n, secs * 1e3,
           secs > 0 ? 2.0 * (double)n * n * n / secs / 1e9 : 0.0);

    CU_CHECK(cuMemFree(da));
    CU_CHECK(cuMemFree(db));
    CU_CHECK(cuMemFree(dc));
    CU_CHECK(cuModuleUnload(mod));
    if (bad != 0) {
        printf("matmul: FAIL: %lu of %lu elements differ (max rel err %.3g)\n", bad, n * n, worst);
        return kExitResultMismatch;
    }
    printf("matmul: PASS (max rel err %.3g)\n", worst);
    return kExitPass;
}
