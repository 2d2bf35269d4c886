// matmul: c = a * b on the vGPU for square row-major n x n float matrices
// (cmdline n=, default 64), checked against an integer product on the guest
// CPU. No floating point in the guest: the inputs are integers in [-8, 8]
// written as float bits, so every partial sum (|sum| <= 64 n <= 2^18 for
// n <= 4096) is exact in binary32 and the check is exact equality.
#include "guest-stub/programs/program_common.h"

using namespace guest;

namespace {
constexpr int32_t kLimit = 8; // inputs in [-kLimit, kLimit]
constexpr uint64_t kMaxN = 4096;
static_assert(kMaxN * kLimit * kLimit < (uint64_t)kF32ExactIntLimit, "sums must be exact floats");

// Fills the float bits of an n x n matrix with integers in [-kLimit, kLimit]
// and keeps the integers: row-major in ints, or transposed (ints[j*n + i] for
// element (i, j)) so the reference product walks both operands in order.
void fill_matrix(uint32_t* bits, int8_t* ints, uint64_t n, uint64_t seed, bool transposed)
{
    uint32_t encoded[2 * kLimit + 1];
    for (int32_t v = -kLimit; v <= kLimit; ++v)
        encoded[v + kLimit] = f32_bits_from_int(v);
    RandomInts r(seed, -kLimit, kLimit);
    for (uint64_t i = 0; i < n; ++i) {
        for (uint64_t j = 0; j < n; ++j) {
            const int32_t v = r.next();
            bits[i * n + j] = encoded[v + kLimit];
            ints[transposed ? j * n + i : i * n + j] = (int8_t)v;
        }
    }
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
    const size_t bytes = n * n * sizeof(uint32_t);

    CU_CHECK(cuInit(0));
    print_device_banner("matmul");
    CUmodule mod;
    CUfunction fn = load_kernel("matmul", "matmul", &mod);

    auto* a = static_cast<uint32_t*>(host_alloc(bytes, pageable)); // float bits
    auto* b = static_cast<uint32_t*>(host_alloc(bytes, pageable));
    auto* c = static_cast<uint32_t*>(host_alloc(bytes, pageable));
    auto* ai = static_cast<int8_t*>(pinned_alloc(n * n)); // a, row-major
    auto* bt = static_cast<int8_t*>(pinned_alloc(n * n)); // b, transposed
    fill_matrix(a, ai, n, boot_info().seed ^ 0x3a7a, false);
    fill_matrix(b, bt, n, boot_info().seed ^ 0x3a7b, true);
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
    for (uint64_t i = 0; i < n; ++i) {
        const int8_t* row = ai + i * n;
        for (uint64_t j = 0; j < n; ++j) {
            const int8_t* col = bt + j * n;
            int32_t want = 0;
            for (uint64_t k = 0; k < n; ++k)
                want += row[k] * col[k];
            int32_t got;
            if (!f32_bits_to_int(c[i * n + j], &got) || got != want) {
                if (bad < 5)
                    printf("matmul: c[%lu][%lu] = float bits 0x%08x, expected %d\n", i, j,
                           c[i * n + j], want);
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
    printf("matmul: PASS (all %lu elements exact)\n", n * n);
    return kExitPass;
}
