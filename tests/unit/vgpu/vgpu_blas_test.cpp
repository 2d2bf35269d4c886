// cuBLAS and cuRAND forwarded as calls (dispatch_blas.cpp, dispatch_rand.cpp)
// on the host backend's CPU references; for cuBLAS: the extent arithmetic and per-call rules (blas_checks.h), and
// through the ring: real numbers, operands outside the VM's memory,
// GemmBatched's device pointer arrays, handles scoped by context, freed by
// context destroy and RESET, and charged to the quota.
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "kvmtool-gpu/abi/vgpu_blas_abi.h"
#include "kvmtool-gpu/abi/blas_checks.h"
#include "kvmtool-gpu/abi/blas_extent.h"
#include "kvmtool-gpu/devices/vgpu/backends/blas_library.h"
#include "kvmtool-gpu/devices/vgpu/backends/fft_library.h"
#include "tests/support/host_libraries.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

TEST(BlasExtent, SpansRefuseWhatCublasRefusesAndEveryOverflow) {
    EXPECT_EQ(blas_matrix_span(3, 2, 5, 4), (5 + 3) * 4u); // one full column, then 3 rows
    EXPECT_FALSE(blas_matrix_span(5, 2, 4, 4));            // ld < rows
    EXPECT_FALSE(blas_matrix_span(1, 2, int64_t{1} << 31, 4)); // ld past cuBLAS's int
    EXPECT_FALSE(blas_matrix_span(INT32_MAX, INT32_MAX, INT32_MAX, 16).has_value() &&
                 *blas_matrix_span(INT32_MAX, INT32_MAX, INT32_MAX, 16) < (uint64_t{INT32_MAX} << 30));
    EXPECT_EQ(blas_vector_span(10, -3, 8), (9 * 3 + 1) * 8u); // a negative increment spans the same bytes
    EXPECT_FALSE(blas_vector_span(10, 0, 8));
    EXPECT_EQ(blas_vector_span(10, 0, 8, true), 8u);
    EXPECT_EQ(blas_strided_span(100, 30, 4, 4), 3 * 30 * 4 + 100u);
    EXPECT_FALSE(blas_strided_span(100, -1, 4, 4));
    EXPECT_FALSE(blas_strided_span(~0ull - 2, 1, 2, 4)); // wraps
    EXPECT_FALSE(blas_strided_span(8, INT64_MAX, 3, 8));
}

vgpu_blas_gemm sgemm(int m, int n, int k, int lda, int ldb, int ldc) {
    vgpu_blas_gemm g{};
    g.head = {1, VGPU_BLAS_GEMM, 0};
    g.m = m, g.n = n, g.k = k, g.batch = 1, g.form = VGPU_BLAS_GEMM_ONE, g.algo = -1;
    g.atype = g.btype = g.ctype = VGPU_BLAS_R_32F;
    g.a = {0x1000, lda, 0}, g.b = {0x2000, ldb, 0}, g.c = {0x3000, ldc, 0};
    return g;
}

TEST(BlasChecks, GemmRulesAndOperands) {
    BlasPlan p = check_gemm(sgemm(4, 3, 2, 4, 2, 4));
    ASSERT_EQ(p.why, nullptr);
    ASSERT_EQ(p.count, 3u);
    EXPECT_EQ(p.operands[0].bytes, (4 + 4) * 4u); // A 4 x 2, lda 4
    EXPECT_EQ(p.operands[2].bytes, (2 * 4 + 4) * 4u);
    EXPECT_EQ(check_gemm(sgemm(4, 3, 2, 3, 2, 4)).status, VGPU_ERROR_INVALID_VALUE); // lda < m
    EXPECT_EQ(check_gemm(sgemm(0, 3, 2, 0, 2, 1)).status, VGPU_ERROR_INVALID_VALUE); // lda < max(1, m)
    EXPECT_EQ(check_gemm(sgemm(-1, 3, 2, 4, 2, 4)).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(check_gemm(sgemm(4, 3, 0, 4, 1, 4)).count, 1u); // k = 0: C only
    vgpu_blas_gemm g = sgemm(4, 3, 2, 4, 2, 4);
    g.btype = VGPU_BLAS_R_64F;
    EXPECT_EQ(check_gemm(g).status, VGPU_ERROR_INVALID_VALUE); // typed gemm of two types
    g = sgemm(4, 3, 2, 4, 2, 4);
    g.form = VGPU_BLAS_GEMM_POINTERS, g.batch = 5;
    p = check_gemm(g);
    ASSERT_EQ(p.why, nullptr);
    EXPECT_EQ(p.operands[0].bytes, 5 * 8u); // the array, not the matrix
    EXPECT_EQ(p.matrix_bytes[0], (4 + 4) * 4u);
    g.batch = int32_t(kBlasMaxPointerBatch + 1);
    EXPECT_EQ(check_gemm(g).status, VGPU_ERROR_INVALID_VALUE);
    g = sgemm(4, 3, 2, 4, 2, 4);
    g.form = VGPU_BLAS_GEMM_STRIDED, g.batch = 3, g.c.stride = 100;
    EXPECT_EQ(check_gemm(g).operands[2].bytes, 2 * 100 * 4 + (2 * 4 + 4) * 4u);
    g.head.flags = 2;
    EXPECT_EQ(check_gemm(g).status, VGPU_ERROR_INVALID_VALUE); // unknown flag
    g = sgemm(4, 3, 2, 4, 2, 4);
    g.head.routine = VGPU_BLAS_GEMM_EX, g.compute = 12345;
    EXPECT_EQ(check_gemm(g).status, VGPU_ERROR_NOT_SUPPORTED);
    g.compute = VGPU_BLAS_COMPUTE_32F, g.algo = 50;
    EXPECT_EQ(check_gemm(g).status, VGPU_ERROR_INVALID_VALUE);
}

TEST(BlasChecks, OtherRoutines) {
    vgpu_blas_level1 l1{};
    l1.head = {1, VGPU_BLAS_DOTC, 0};
    l1.type = VGPU_BLAS_R_32F, l1.n = 4, l1.x = {0x1000, 1}, l1.y = {0x2000, 1};
    EXPECT_EQ(check_level1(l1).status, VGPU_ERROR_INVALID_VALUE); // dotc of a real type
    l1.head.routine = VGPU_BLAS_DOT, l1.head.flags = VGPU_BLAS_DEVICE_SCALARS, l1.result = 0x3000;
    EXPECT_EQ(check_level1(l1).count, 3u); // the result is an operand in device mode
    l1.head.routine = 99;
    EXPECT_EQ(check_level1(l1).status, VGPU_ERROR_INVALID_VALUE);
    vgpu_blas_level2 l2{};
    l2.head = {1, VGPU_BLAS_GEMV, 0};
    l2.type = VGPU_BLAS_R_64F, l2.m = 3, l2.n = 5, l2.a = {0x1000, 3, 0}, l2.x = {0x2000, 0}, l2.y = {0x3000, 1};
    EXPECT_EQ(check_level2(l2).status, VGPU_ERROR_INVALID_VALUE); // incx 0
    l2.x.inc = 2;
    EXPECT_EQ(check_level2(l2).operands[1].bytes, (4 * 2 + 1) * 8u); // x has n elements (no transpose)
    vgpu_blas_level3 l3{};
    l3.head = {1, VGPU_BLAS_TRSM, 0};
    l3.type = VGPU_BLAS_R_32F, l3.side = 1, l3.m = 3, l3.n = 5, l3.a = {0x1000, 4, 0}, l3.b = {0x2000, 3, 0};
    EXPECT_EQ(check_level3(l3).status, VGPU_ERROR_INVALID_VALUE); // right side: A is n x n, lda 4 < 5
    l3.a.ld = 5;
    EXPECT_EQ(check_level3(l3).why, nullptr);
    l3.type = VGPU_BLAS_R_16F;
    EXPECT_EQ(check_level3(l3).status, VGPU_ERROR_NOT_SUPPORTED);
}

struct VgpuBlas : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 128ull << 20, .max_handles = 8}};
    uint64_t handle = 0;
    void SetUp() override {
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
        const Done d = rig.call({.opcode = VGPU_OP_BLAS_CREATE});
        ASSERT_EQ(d.status, VGPU_SUCCESS);
        handle = d.r0;
    }
    uint64_t upload(const std::vector<float>& v) {
        const uint64_t d = rig.alloc(v.size() * 4);
        rig.put(kDataGpa, v.data(), v.size() * 4);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kDataGpa, v.size() * 4, 0}}).status, VGPU_SUCCESS);
        return d;
    }
    std::vector<float> download(uint64_t d, size_t n) {
        std::vector<float> v(n);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, n * 4, 0}}).status, VGPU_SUCCESS);
        rig.get(kDataGpa, v.data(), n * 4);
        return v;
    }
    Done gemm(vgpu_blas_gemm g) {
        g.head.handle = handle;
        const float one = 1.f, zero = 0.f;
        std::memcpy(g.alpha.bytes, &one, 4), std::memcpy(g.beta.bytes, &zero, 4);
        return rig.call({.opcode = VGPU_OP_BLAS_GEMM, .payload = bytes(g)});
    }
    uint64_t used() {
        const Done d = rig.call({.opcode = VGPU_OP_MEM_GET_INFO});
        return d.r1 - d.r0;
    }
};

TEST_F(VgpuBlas, SgemmGivesTheProductAndRefusesOperandsOutsideTheVm) {
    // A 2 x 3, B 3 x 2 (column-major): C = A B.
    const uint64_t a = upload({1, 4, 2, 5, 3, 6}), b = upload({7, 9, 11, 8, 10, 12}), c = upload({0, 0, 0, 0});
    vgpu_blas_gemm g = sgemm(2, 2, 3, 2, 3, 2);
    g.a.ptr = a, g.b.ptr = b, g.c.ptr = c;
    ASSERT_EQ(gemm(g).status, VGPU_SUCCESS);
    EXPECT_EQ(download(c, 4), (std::vector<float>{58, 139, 64, 154}));
    // C one element past its allocation (4 floats): refused, C untouched.
    upload({0, 0, 0, 0});
    g.c.ptr = c + 4;
    EXPECT_EQ(gemm(g).status, VGPU_ERROR_INVALID_VALUE);
    g.c.ptr = c, g.b.ptr = 0x1234;
    EXPECT_EQ(gemm(g).status, VGPU_ERROR_INVALID_VALUE);
    g.b.ptr = b, g.a.ptr = a + 1; // inside A's allocation, but not on a float
    EXPECT_EQ(gemm(g).status, VGPU_ERROR_INVALID_VALUE);
    g.a.ptr = a;
    EXPECT_EQ(download(c, 4), (std::vector<float>{58, 139, 64, 154}));
    // A payload that is not the call's struct, and a handle that is not one.
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_GEMM, .payload = bytes(g), .payload_len = 40}).status,
              VGPU_ERROR_INVALID_VALUE);
    g.head.handle = handle + 1;
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_GEMM, .payload = bytes(g)}).status, VGPU_ERROR_INVALID_HANDLE);
}

TEST_F(VgpuBlas, DotResultComesBackInHostModeAndStaysOnTheDeviceInDeviceMode) {
    const uint64_t x = upload({1, 2, 3}), y = upload({4, 5, 6}), r = upload({0});
    vgpu_blas_level1 c{};
    c.head = {handle, VGPU_BLAS_DOT, 0};
    c.type = VGPU_BLAS_R_32F, c.n = 3, c.x = {x, 1}, c.y = {y, 1};
    const Done d = rig.call({.opcode = VGPU_OP_BLAS_LEVEL1, .payload = bytes(c)});
    ASSERT_EQ(d.status, VGPU_SUCCESS);
    float v;
    std::memcpy(&v, &d.r0, 4);
    EXPECT_EQ(v, 32.f);
    c.head.flags = VGPU_BLAS_DEVICE_SCALARS, c.result = r;
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_BLAS_LEVEL1, .payload = bytes(c)}).status, VGPU_SUCCESS);
    EXPECT_EQ(download(r, 1)[0], 32.f);
    c.result = r + 4; // past the allocation
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_LEVEL1, .payload = bytes(c)}).status, VGPU_ERROR_INVALID_VALUE);
}

TEST_F(VgpuBlas, BatchedGemmReadsAndChecksEveryDevicePointer) {
    const uint64_t a = upload({2}), b = upload({3}), c0 = upload({0}), c1 = upload({0});
    std::vector<uint64_t> arrays = {a, a, b, b, c0, c1}; // A[2], B[2], C[2]
    const uint64_t lists = rig.alloc(arrays.size() * 8);
    rig.put(kDataGpa, arrays.data(), arrays.size() * 8);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {lists, kDataGpa, arrays.size() * 8, 0}}).status,
              VGPU_SUCCESS);
    vgpu_blas_gemm g = sgemm(1, 1, 1, 1, 1, 1);
    g.form = VGPU_BLAS_GEMM_POINTERS, g.batch = 2;
    g.a.ptr = lists, g.b.ptr = lists + 16, g.c.ptr = lists + 32;
    ASSERT_EQ(gemm(g).status, VGPU_SUCCESS);
    EXPECT_EQ(download(c0, 1)[0], 6.f);
    EXPECT_EQ(download(c1, 1)[0], 6.f);
    // One pointer of the B list outside the VM: the whole call is refused.
    const uint64_t foreign = 0x7000'0000;
    rig.put(kDataGpa, &foreign, 8);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {lists + 24, kDataGpa, 8, 0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(gemm(g).status, VGPU_ERROR_INVALID_VALUE);
    // The arrays themselves must be the VM's, all `batch` of them.
    g.b.ptr = lists + 16, g.c.ptr = lists + 40; // C's list runs past the allocation
    EXPECT_EQ(gemm(g).status, VGPU_ERROR_INVALID_VALUE);
}

// Back-to-back batched gemms on the same arrays read them once: the arrays
// are rewritten here behind the device model (straight into the host
// backend's memory, as no guest command can), and the next call still uses
// the pointers checked before; any command in between (here a NOP) makes the
// next call read and check them again. A call whose outputs overlap its
// arrays is never cached.
TEST_F(VgpuBlas, BatchedGemmReadsItsArraysAgainOnlyAfterACommand) {
    const uint64_t a = upload({2}), b = upload({3}), c0 = upload({0}), c1 = upload({0});
    std::vector<uint64_t> arrays = {a, b, c0};
    const uint64_t lists = rig.alloc(arrays.size() * 8);
    rig.put(kDataGpa, arrays.data(), arrays.size() * 8);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {lists, kDataGpa, arrays.size() * 8, 0}}).status,
              VGPU_SUCCESS);
    vgpu_blas_gemm g = sgemm(1, 1, 1, 1, 1, 1);
    g.form = VGPU_BLAS_GEMM_POINTERS, g.batch = 1;
    g.a.ptr = lists, g.b.ptr = lists + 8, g.c.ptr = lists + 16;
    ASSERT_EQ(gemm(g).status, VGPU_SUCCESS);
    uint64_t* c_entry = reinterpret_cast<uint64_t*>(rig.host->translate(lists + 16, 8));
    ASSERT_NE(c_entry, nullptr);
    *c_entry = c1; // behind the device model's back
    ASSERT_EQ(gemm(g).status, VGPU_SUCCESS);
    EXPECT_EQ(download(c1, 1)[0], 0.f) << "the second call read the arrays again";
    rig.call({.opcode = VGPU_OP_NOP}); // the next call may not trust what it read
    ASSERT_EQ(gemm(g).status, VGPU_SUCCESS);
    EXPECT_EQ(download(c1, 1)[0], 6.f);
    // C's pointer names the arrays themselves: the call writes them, so the
    // next one reads them again (and refuses what the product left there).
    *c_entry = lists;
    rig.call({.opcode = VGPU_OP_NOP});
    g.c.ld = 1;
    EXPECT_EQ(gemm(g).status, VGPU_SUCCESS);
    *c_entry = 0x7000'0000; // as the product might have: outside the VM
    EXPECT_EQ(gemm(g).status, VGPU_ERROR_INVALID_VALUE) << "a call that wrote its own arrays was cached";
}

TEST_F(VgpuBlas, HandlesBelongToTheirContextAndGoWithItAndWithReset) {
    const uint64_t charged = used();
    EXPECT_GE(charged, kBlasHandleCharge);
    const Done ctx = rig.call({.opcode = VGPU_OP_CTX_CREATE, .args = {0, 0}});
    ASSERT_EQ(ctx.status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_SET_MATH_MODE, .args = {handle, 0}}).status, VGPU_ERROR_INVALID_HANDLE);
    const Done h2 = rig.call({.opcode = VGPU_OP_BLAS_CREATE});
    ASSERT_EQ(h2.status, VGPU_SUCCESS);
    EXPECT_EQ(host_blas_of(*rig.host).live_handles(), 2u);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_DESTROY, .args = {ctx.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(host_blas_of(*rig.host).live_handles(), 1u);
    const Done primary = rig.call({.opcode = VGPU_OP_PRIMARY_CTX_RETAIN, .args = {0}});
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {primary.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(used(), charged); // the destroyed context's handle gave its charge back
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_CTX_SET_CURRENT, .args = {0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_DESTROY, .args = {handle}}).status, VGPU_ERROR_INVALID_CONTEXT);
    rig.reset();
    EXPECT_EQ(host_blas_of(*rig.host).live_handles(), 0u);
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(used(), 0u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_DESTROY, .args = {handle}}).status, VGPU_ERROR_INVALID_HANDLE);
}

TEST_F(VgpuBlas, SettersCheckTheirValues) {
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_SET_MATH_MODE, .args = {handle, 3}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_SET_MATH_MODE, .args = {handle, 4}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_SET_STREAM, .args = {handle, 0x5300'0000'0000'0001ull}}).status,
              VGPU_ERROR_INVALID_HANDLE);
    const Done s = rig.call({.opcode = VGPU_OP_STREAM_CREATE, .args = {0}});
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_SET_STREAM, .args = {handle, s.r0}}).status, VGPU_SUCCESS);
    const uint64_t ws = rig.alloc(1 << 20);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_SET_WORKSPACE, .args = {handle, ws, 1 << 20}}).status, VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_SET_WORKSPACE, .args = {handle, ws, (1 << 20) + 1}}).status,
              VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_GET_VERSION}).r0, uint64_t(HostBlas::kFollowsVersion));
}

TEST(VgpuBlasQuota, AHandlePastTheQuotaIsRefused) {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 16ull << 20, .max_handles = 8}};
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_BLAS_CREATE}).status, VGPU_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(host_blas_of(*rig.host).live_handles(), 0u);
}

} // namespace
} // namespace kvmgpu::vgpu::test

namespace kvmgpu::vgpu::test {
namespace {

// cuRAND's host API (dispatch_rand.cpp) on the host backend's generator.
struct VgpuRand : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 64ull << 20, .max_handles = 8}};
    uint64_t gen = 0;
    void SetUp() override {
        ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
        const Done d = rig.call({.opcode = VGPU_OP_RAND_CREATE, .args = {101}}); // XORWOW
        ASSERT_EQ(d.status, VGPU_SUCCESS);
        gen = d.r0;
    }
    Done generate(uint64_t dptr, uint64_t count, uint64_t kind, double mean = 0, double sd = 0) {
        return rig.call({.opcode = VGPU_OP_RAND_GENERATE,
                         .args = {gen, dptr, count, kind, std::bit_cast<uint64_t>(mean), std::bit_cast<uint64_t>(sd)}});
    }
    template <class T>
    std::vector<T> download(uint64_t d, size_t n) {
        std::vector<T> v(n);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, n * sizeof(T), 0}}).status, VGPU_SUCCESS);
        rig.get(kDataGpa, v.data(), n * sizeof(T));
        return v;
    }
};

TEST_F(VgpuRand, UniformAndNormalNumbersLandInTheVmsMemory) {
    const uint64_t d = rig.alloc(4096 * 8);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_RAND_SET_SEED, .args = {gen, 1234}}).status, VGPU_SUCCESS);
    ASSERT_EQ(generate(d, 4096, VGPU_RAND_UNIFORM).status, VGPU_SUCCESS);
    double sum = 0;
    for (float v : download<float>(d, 4096)) {
        ASSERT_TRUE(v > 0.f && v <= 1.f);
        sum += v;
    }
    EXPECT_NEAR(sum / 4096, 0.5, 0.03);
    ASSERT_EQ(generate(d, 4096, VGPU_RAND_NORMAL_DOUBLE, 3.0, 2.0).status, VGPU_SUCCESS);
    double mean = 0, sq = 0;
    for (double v : download<double>(d, 4096)) mean += v, sq += v * v;
    mean /= 4096;
    EXPECT_NEAR(mean, 3.0, 0.15);
    EXPECT_NEAR(std::sqrt(sq / 4096 - mean * mean), 2.0, 0.15);
    // The same seed, the same numbers.
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_RAND_SET_SEED, .args = {gen, 99}}).status, VGPU_SUCCESS);
    ASSERT_EQ(generate(d, 8, VGPU_RAND_BITS).status, VGPU_SUCCESS);
    const auto first = download<uint32_t>(d, 8);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_RAND_SET_SEED, .args = {gen, 99}}).status, VGPU_SUCCESS);
    ASSERT_EQ(generate(d, 8, VGPU_RAND_BITS).status, VGPU_SUCCESS);
    EXPECT_EQ(download<uint32_t>(d, 8), first);
}

TEST_F(VgpuRand, RefusesWhatCuRandRefusesAndEverythingOutsideTheVm) {
    const uint64_t d = rig.alloc(4096);
    EXPECT_EQ(generate(d, 3, VGPU_RAND_NORMAL).status, VGPU_ERROR_INVALID_VALUE);   // odd normal count
    EXPECT_EQ(generate(d, 1025, VGPU_RAND_UNIFORM).status, VGPU_ERROR_INVALID_VALUE); // one past the allocation
    EXPECT_EQ(generate(d + 2, 4, VGPU_RAND_UNIFORM).status, VGPU_ERROR_INVALID_VALUE); // misaligned
    EXPECT_EQ(generate(d, 1ull << 62, VGPU_RAND_UNIFORM_DOUBLE).status, VGPU_ERROR_INVALID_VALUE); // overflows
    EXPECT_EQ(generate(d, 4, 9).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_RAND_CREATE, .args = {205}}).status, VGPU_ERROR_INVALID_VALUE); // no such type
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_RAND_SET_SEED, .args = {gen + 1, 1}}).status, VGPU_ERROR_INVALID_HANDLE);
    // Freed at RESET.
    EXPECT_EQ(host_rand_of(*rig.host).live_generators(), 1u);
    rig.reset();
    EXPECT_EQ(host_rand_of(*rig.host).live_generators(), 0u);
}

} // namespace
} // namespace kvmgpu::vgpu::test

namespace kvmgpu::vgpu::test {
namespace {

// cuFFT's basic plans (dispatch_fft.cpp) on the host backend's naive DFT.
TEST(FftShape, SizesAndRefusals) {
    const uint64_t n1[3] = {16, 1, 1}, n2[3] = {8, 6, 1}, bad[3] = {0, 1, 1}, huge[3] = {1 << 20, 1 << 12, 1};
    auto c2c = FftShape::from(1, n1, 0x29, 3);
    ASSERT_TRUE(c2c);
    EXPECT_EQ(c2c->input_bytes(), 16 * 3 * 8u);
    auto r2c = FftShape::from(2, n2, 0x2a, 1);
    ASSERT_TRUE(r2c);
    EXPECT_EQ(r2c->input_bytes(), 48 * 4u);
    EXPECT_EQ(r2c->output_bytes(), 8 * 4 * 8u); // 8 x (6/2 + 1) complex
    auto z2d = FftShape::from(2, n2, 0x6c, 1);
    EXPECT_EQ(z2d->input_bytes(), 8 * 4 * 16u);
    EXPECT_EQ(z2d->output_bytes(), 48 * 8u);
    EXPECT_FALSE(FftShape::from(0, n1, 0x29, 1));
    EXPECT_FALSE(FftShape::from(4, n1, 0x29, 1));
    EXPECT_FALSE(FftShape::from(1, bad, 0x29, 1));
    EXPECT_FALSE(FftShape::from(1, n1, 0x30, 1));
    EXPECT_FALSE(FftShape::from(2, huge, 0x29, 1)); // 2^32 elements
    EXPECT_FALSE(FftShape::from(1, n1, 0x29, 0));
}

TEST(VgpuFft, PlansExecsAndRefusals) {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 64ull << 20, .max_handles = 8}};
    ASSERT_EQ(rig.enable(), VGPU_SUCCESS);
    const Done p = rig.call({.opcode = VGPU_OP_FFT_PLAN, .args = {1, 4, 1, 1, 0x29, 1}}); // 4-point C2C
    ASSERT_EQ(p.status, VGPU_SUCCESS);
    const float x[8] = {1, 0, 2, 0, 3, 0, 4, 0};
    const uint64_t d = rig.alloc(sizeof x);
    rig.put(kDataGpa, x, sizeof x);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_HTOD, .args = {d, kDataGpa, sizeof x, 0}}).status, VGPU_SUCCESS);
    auto exec = [&](uint64_t in, uint64_t out, uint64_t type, int64_t dir) {
        return rig.call({.opcode = VGPU_OP_FFT_EXEC, .args = {p.r0, in, out, type, uint64_t(dir)}}).status;
    };
    ASSERT_EQ(exec(d, d, 0x29, -1), VGPU_SUCCESS);
    float y[8];
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, sizeof y, 0}}).status, VGPU_SUCCESS);
    rig.get(kDataGpa, y, sizeof y);
    const float want[8] = {10, 0, -2, 2, -2, 0, -2, -2}; // DFT of 1, 2, 3, 4
    for (int i = 0; i < 8; ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << i;
    EXPECT_EQ(exec(d, d + 8, 0x29, -1), VGPU_ERROR_INVALID_VALUE); // the output runs past the allocation
    EXPECT_EQ(exec(d, d, 0x2a, 0), VGPU_ERROR_INVALID_VALUE);      // not the plan's type
    EXPECT_EQ(exec(d, d, 0x29, 2), VGPU_ERROR_INVALID_VALUE);      // direction
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FFT_PLAN, .args = {2, 4, 4, 1, 0x29, 2}}).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(host_fft_of(*rig.host).live_plans(), 1u);
    EXPECT_EQ(rig.call({.opcode = VGPU_OP_FFT_DESTROY, .args = {p.r0}}).status, VGPU_SUCCESS);
    EXPECT_EQ(exec(d, d, 0x29, -1), VGPU_ERROR_INVALID_HANDLE);
    ASSERT_EQ(rig.call({.opcode = VGPU_OP_FFT_PLAN, .args = {3, 4, 4, 4, 0x6a, 1}}).status, VGPU_SUCCESS);
    rig.reset();
    EXPECT_EQ(host_fft_of(*rig.host).live_plans(), 0u);
}

} // namespace
} // namespace kvmgpu::vgpu::test
