// matmul: c = a * b on the vGPU for square row-major n x n float matrices
// (cmdline n=, default 64) with inputs uniform in [-1, 1), checked on the
// guest CPU against a double-precision product: each element must lie
// within n * 2^-23 * sum_k |a_ik b_kj| of it, twice the worst-case float
// rounding error of an n-term dot product (fused or not, any order).
#include "guest-stub/programs/program_common.h"

using namespace guest;

namespace {
constexpr uint64_t kMaxN = 4096;

void fill_matrix(float* m, uint64_t n, uint64_t seed)
{
    RandomFloats r(seed);
    for (uint64_t i = 0; i < n * n; ++i)
        m[i] = r.next();
}
} // namespace

int guest_main(const kvmgpu_boot_info*)
{
    bool ok = true;
    const uint64_t n = cmdline().get_u64("n", 64, &ok);
    if (!ok || n == 0 || n > kMaxN) {
        printf("matmul: n must be in [1, %lu]\n", kMaxN);
        return kExitBadCmdline;
    }
    const bool pageable = want_pageable_host_memory();
    const size_t bytes = n * n * sizeof(float);

    open_device("matmul");
    CUmodule mod;
    CUfunction fn = load_kernel("matmul", "matmul", &mod);

    auto* a = static_cast<float*>(host_alloc(bytes, pageable));
    auto* b = static_cast<float*>(host_alloc(bytes, pageable));
    auto* c = static_cast<float*>(host_alloc(bytes, pageable));
    fill_matrix(a, n, boot_info().seed ^ 0x3a7a);
    fill_matrix(b, n, boot_info().seed ^ 0x3a7b);
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
    double worst = 0; // largest error as a fraction of its bound
    for (uint64_t i = 0; i < n; ++i) {
        for (uint64_t j = 0; j < n; ++j) {
            double want = 0, magnitude = 0;
            for (uint64_t k = 0; k < n; ++k) {
                const double term = (double)a[i * n + k] * (double)b[k * n + j];
                want += term;
                magnitude += term < 0 ? -term : term;
            }
            const double got = c[i * n + j], bound = (double)n * 0x1p-23 * magnitude;
            const double err = got > want ? got - want : want - got;
            if (bound > 0 && err / bound > worst)
                worst = err / bound;
            if (!(err <= bound)) { // NaN fails too
                if (bad < 5)
                    printf("matmul: c[%lu][%lu] = %.9g, expected %.9g (error %.3g > bound %.3g)\n", i, j, got, want,
                           err, bound);
                ++bad;
            }
        }
    }
    const uint64_t ns = tsc_to_ns(t1 - t0);
    printf("matmul: n=%lu kernel+sync %s ms (%s GFLOP/s)\n", n, ms_text(ns).text,
           giga_per_s_text(2 * n * n * n, ns).text);

    CU_CHECK(cuMemFree(da));
    CU_CHECK(cuMemFree(db));
    CU_CHECK(cuMemFree(dc));
    CU_CHECK(cuModuleUnload(mod));
    if (bad != 0) {
        printf("matmul: FAIL: %lu of %lu elements differ\n", bad, n * n);
        return kExitResultMismatch;
    }
    printf("matmul: PASS (all %lu elements within float rounding of a double product; worst %.2f%% of "
           "the bound)\n", n * n, 100 * worst);
    return kExitPass;
}
