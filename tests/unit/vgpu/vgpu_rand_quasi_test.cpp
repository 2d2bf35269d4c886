// cuRAND's quasi-random generators, offsets, orderings and tables
// (dispatch_rand.cpp) on the host backend. Where the host has libcurand
// (no GPU needed: its host generators run on the CPU), the host backend's
// Sobol numbers are compared with cuRAND's own, bit for bit (words and
// uniforms) and to 1e-5 (normals); elsewhere those cases skip.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <bit>
#include <cmath>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/rand/curand_tables.h"
#include "kvmtool-gpu/devices/vgpu/rand/sobol.h"
#include "tests/support/vgpu_rig.h"

namespace kvmgpu::vgpu::test {
namespace {

// libcurand's host API, typed without curand.h (enums as int).
struct Curand {
    void* lib = nullptr;
    int (*create_host)(void** g, int type) = nullptr;
    int (*destroy)(void* g) = nullptr;
    int (*dims)(void* g, unsigned d) = nullptr;
    int (*offset)(void* g, unsigned long long o) = nullptr;
    int (*bits)(void* g, unsigned* out, size_t n) = nullptr;
    int (*bits64)(void* g, unsigned long long* out, size_t n) = nullptr;
    int (*uniform)(void* g, float* out, size_t n) = nullptr;
    int (*uniform_double)(void* g, double* out, size_t n) = nullptr;
    int (*normal)(void* g, float* out, size_t n, float m, float s) = nullptr;
    int (*normal_double)(void* g, double* out, size_t n, double m, double s) = nullptr;
    Curand() {
        lib = dlopen("libcurand.so.10", RTLD_NOW);
        if (!lib) lib = dlopen("/usr/local/cuda/lib64/libcurand.so.10", RTLD_NOW);
        if (!lib) return;
        auto sym = [&](auto& f, const char* name) { f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib, name)); };
        sym(create_host, "curandCreateGeneratorHost");
        sym(destroy, "curandDestroyGenerator");
        sym(dims, "curandSetQuasiRandomGeneratorDimensions");
        sym(offset, "curandSetGeneratorOffset");
        sym(bits, "curandGenerate");
        sym(bits64, "curandGenerateLongLong");
        sym(uniform, "curandGenerateUniform");
        sym(uniform_double, "curandGenerateUniformDouble");
        sym(normal, "curandGenerateNormal");
        sym(normal_double, "curandGenerateNormalDouble");
    }
};

struct VgpuRandQuasi : ::testing::Test {
    VgpuRig rig{VgpuOptions{.device_mem_quota = 256ull << 20, .max_handles = 8}};
    void SetUp() override { ASSERT_EQ(rig.enable(), VGPU_SUCCESS); }
    Done create(uint64_t type) { return rig.call({.opcode = VGPU_OP_RAND_CREATE, .args = {type}}); }
    uint32_t set(uint16_t op, uint64_t g, uint64_t v) { return rig.call({.opcode = op, .args = {g, v}}).status; }
    uint32_t generate(uint64_t g, uint64_t dptr, uint64_t n, uint64_t kind, double mean = 0, double sd = 1) {
        return rig.call({.opcode = VGPU_OP_RAND_GENERATE,
                         .args = {g, dptr, n, kind, std::bit_cast<uint64_t>(mean), std::bit_cast<uint64_t>(sd)}})
            .status;
    }
    template <class T>
    std::vector<T> download(uint64_t d, size_t n) {
        std::vector<T> v(n);
        EXPECT_EQ(rig.call({.opcode = VGPU_OP_MEMCPY_DTOH, .args = {kDataGpa, d, n * sizeof(T), 0}}).status, VGPU_SUCCESS);
        rig.get(kDataGpa, v.data(), n * sizeof(T));
        return v;
    }
};

// Each Sobol type, 3 dimensions, offset 5, through the whole path, against libcurand's host generator.
TEST_F(VgpuRandQuasi, SobolMatchesCuRandsHostGenerator) {
    const Curand ref;
    if (!ref.lib || !ref.create_host) GTEST_SKIP() << "no libcurand.so.10 on this host";
    constexpr size_t kN = 3 * 40;
    const uint64_t d = rig.alloc(kN * 8);
    for (int type : {200, 201, 202, 203, 204}) {
        SCOPED_TRACE(type);
        const bool wide = type >= 203;
        const Done g = create(type);
        ASSERT_EQ(g.status, VGPU_SUCCESS);
        ASSERT_EQ(set(VGPU_OP_RAND_SET_DIMENSIONS, g.r0, 3), VGPU_SUCCESS);
        ASSERT_EQ(set(VGPU_OP_RAND_SET_OFFSET, g.r0, 5), VGPU_SUCCESS);
        ASSERT_EQ(set(VGPU_OP_RAND_SET_ORDERING, g.r0, 201), VGPU_SUCCESS);
        void* h = nullptr;
        ASSERT_EQ(ref.create_host(&h, type), 0);
        ASSERT_EQ(ref.dims(h, 3), 0);
        ASSERT_EQ(ref.offset(h, 5), 0);
        // Words, then (going on in the sequence) uniforms, doubles and normals.
        if (wide) {
            std::vector<unsigned long long> want(kN);
            ASSERT_EQ(ref.bits64(h, want.data(), kN), 0);
            ASSERT_EQ(generate(g.r0, d, kN, VGPU_RAND_LONG_LONG), VGPU_SUCCESS);
            const auto got = download<uint64_t>(d, kN);
            for (size_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], want[i]) << i;
        } else {
            std::vector<unsigned> want(kN);
            ASSERT_EQ(ref.bits(h, want.data(), kN), 0);
            ASSERT_EQ(generate(g.r0, d, kN, VGPU_RAND_BITS), VGPU_SUCCESS);
            EXPECT_EQ(download<uint32_t>(d, kN), want);
        }
        std::vector<float> wf(kN);
        ASSERT_EQ(ref.uniform(h, wf.data(), kN), 0);
        ASSERT_EQ(generate(g.r0, d, kN, VGPU_RAND_UNIFORM), VGPU_SUCCESS);
        EXPECT_EQ(download<float>(d, kN), wf);
        std::vector<double> wd(kN);
        ASSERT_EQ(ref.uniform_double(h, wd.data(), kN), 0);
        ASSERT_EQ(generate(g.r0, d, kN, VGPU_RAND_UNIFORM_DOUBLE), VGPU_SUCCESS);
        EXPECT_EQ(download<double>(d, kN), wd);
        ASSERT_EQ(ref.normal(h, wf.data(), kN, 1.0f, 2.0f), 0);
        ASSERT_EQ(generate(g.r0, d, kN, VGPU_RAND_NORMAL, 1.0, 2.0), VGPU_SUCCESS);
        const auto nf = download<float>(d, kN);
        for (size_t i = 0; i < kN; ++i) EXPECT_NEAR(nf[i], wf[i], 1e-5 * (1 + std::fabs(wf[i]))) << i;
        ASSERT_EQ(ref.normal_double(h, wd.data(), kN, -1.0, 0.5), 0);
        ASSERT_EQ(generate(g.r0, d, kN, VGPU_RAND_NORMAL_DOUBLE, -1.0, 0.5), VGPU_SUCCESS);
        const auto nd = download<double>(d, kN);
        for (size_t i = 0; i < kN; ++i) EXPECT_NEAR(nd[i], wd[i], 1e-9) << i;
        ref.destroy(h);
        ASSERT_EQ(rig.call({.opcode = VGPU_OP_RAND_DESTROY, .args = {g.r0}}).status, VGPU_SUCCESS);
    }
}

// Sobol's defining property, with no reference library: the first 2^k
// points of any dimension put one point in each interval [j/2^k, (j+1)/2^k).
TEST_F(VgpuRandQuasi, EachDimensionFillsEveryDyadicIntervalOnce) {
    if (curand_table(101).empty()) GTEST_SKIP() << "no libcurand.so.10 on this host (cuRAND's tables)";
    const uint64_t d = rig.alloc(4 * 256 * 4);
    const Done g = create(201);
    ASSERT_EQ(set(VGPU_OP_RAND_SET_DIMENSIONS, g.r0, 4), VGPU_SUCCESS);
    ASSERT_EQ(generate(g.r0, d, 4 * 256, VGPU_RAND_BITS), VGPU_SUCCESS);
    const auto x = download<uint32_t>(d, 4 * 256);
    for (int dim = 0; dim < 4; ++dim) {
        std::vector<int> hits(256);
        for (int i = 0; i < 256; ++i) ++hits[x[dim * 256 + i] >> 24];
        for (int j = 0; j < 256; ++j) ASSERT_EQ(hits[j], 1) << "dimension " << dim << " interval " << j;
    }
}

TEST_F(VgpuRandQuasi, RefusesWhatCuRandRefusesAndEverythingOutsideTheVm) {
    if (curand_table(101).empty()) GTEST_SKIP() << "no libcurand.so.10 on this host (cuRAND's tables)";
    const uint64_t d = rig.alloc(4096);
    const Done q = create(201), q64 = create(203), p = create(101);
    ASSERT_EQ(q.status, VGPU_SUCCESS);
    ASSERT_EQ(q64.status, VGPU_SUCCESS);
    ASSERT_EQ(p.status, VGPU_SUCCESS);
    EXPECT_EQ(create(205).status, VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(create(199).status, VGPU_ERROR_INVALID_VALUE);
    // Dimensions: quasi-random only, 1..20000.
    EXPECT_EQ(set(VGPU_OP_RAND_SET_DIMENSIONS, q.r0, 0), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(VGPU_OP_RAND_SET_DIMENSIONS, q.r0, 20001), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(VGPU_OP_RAND_SET_DIMENSIONS, q.r0, 1ull << 32 | 2), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(VGPU_OP_RAND_SET_DIMENSIONS, p.r0, 2), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(VGPU_OP_RAND_SET_DIMENSIONS, q.r0, 20000), VGPU_SUCCESS);
    ASSERT_EQ(set(VGPU_OP_RAND_SET_DIMENSIONS, q.r0, 3), VGPU_SUCCESS);
    // Orderings of the generator's family only; no seed for a quasi-random generator.
    EXPECT_EQ(set(VGPU_OP_RAND_SET_ORDERING, q.r0, 101), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(VGPU_OP_RAND_SET_ORDERING, p.r0, 201), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(VGPU_OP_RAND_SET_ORDERING, p.r0, 105), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(VGPU_OP_RAND_SET_ORDERING, p.r0, 103), VGPU_SUCCESS);
    EXPECT_EQ(set(VGPU_OP_RAND_SET_SEED, q.r0, 1), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(set(VGPU_OP_RAND_SET_OFFSET, q.r0 ^ 1, 1), VGPU_ERROR_INVALID_HANDLE);
    EXPECT_EQ(set(VGPU_OP_RAND_SET_OFFSET, p.r0, ~0ull), VGPU_SUCCESS); // any position
    // A count not a multiple of the dimensions; the word size of the other family.
    EXPECT_EQ(generate(q.r0, d, 4, VGPU_RAND_UNIFORM), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(generate(q.r0, d, 3, VGPU_RAND_NORMAL), VGPU_SUCCESS); // odd is fine when quasi
    EXPECT_EQ(generate(q.r0, d, 3, VGPU_RAND_LONG_LONG), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(generate(q64.r0, d, 2, VGPU_RAND_BITS), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(generate(p.r0, d, 2, VGPU_RAND_LONG_LONG), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(generate(p.r0, d, 3, VGPU_RAND_LOG_NORMAL), VGPU_ERROR_INVALID_VALUE); // odd, pseudo
    EXPECT_EQ(generate(q64.r0, d, 513, VGPU_RAND_LONG_LONG), VGPU_ERROR_INVALID_VALUE); // past the allocation
    EXPECT_EQ(generate(q64.r0, d + 4, 2, VGPU_RAND_LONG_LONG), VGPU_ERROR_INVALID_VALUE); // misaligned
    EXPECT_EQ(generate(q64.r0, d, 1ull << 61, VGPU_RAND_LOG_NORMAL_DOUBLE), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(generate(q64.r0, d, 2, VGPU_RAND_KIND_COUNT_), VGPU_ERROR_INVALID_VALUE);
    // Log-normals are exp(normal): positive.
    ASSERT_EQ(generate(p.r0, d, 64, VGPU_RAND_LOG_NORMAL_DOUBLE, 0.0, 1.0), VGPU_SUCCESS);
    for (double v : download<double>(d, 64)) EXPECT_GT(v, 0.0);
}

// GET_TABLE: the exact size, a known table, a destination inside the VM.
TEST_F(VgpuRandQuasi, TablesAreCopiedWhole) {
    const uint64_t bytes = curand_table_bytes(101);
    ASSERT_EQ(bytes, 20000u * 32 * 4);
    const uint64_t d = rig.alloc(bytes);
    auto get = [&](uint64_t id, uint64_t dptr, uint64_t n) {
        return rig.call({.opcode = VGPU_OP_RAND_GET_TABLE, .args = {id, dptr, n}}).status;
    };
    EXPECT_EQ(get(100, d, bytes), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(get(0, d, 0), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(get(101, d, bytes - 1), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(get(103, d, curand_table_bytes(103)), VGPU_ERROR_INVALID_VALUE); // larger than the allocation
    EXPECT_EQ(get(101, d + 8, bytes), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(get(101, d + 4, bytes - 8), VGPU_ERROR_INVALID_VALUE);
    EXPECT_EQ(get(101, 0x1000, bytes), VGPU_ERROR_INVALID_VALUE);
    if (curand_table(101).empty()) {
        EXPECT_EQ(get(101, d, bytes), VGPU_ERROR_NOT_SUPPORTED);
        GTEST_SKIP() << "no libcurand.so.10 on this host: the copy itself is not checked";
    }
    ASSERT_EQ(get(VGPU_RAND_TABLE_SCRAMBLE_32, d, 80000), VGPU_SUCCESS);
    const auto c = download<uint32_t>(d, 4);
    EXPECT_EQ(0, std::memcmp(c.data(), curand_table(VGPU_RAND_TABLE_SCRAMBLE_32).data(), 16));
    ASSERT_EQ(get(101, d, bytes), VGPU_SUCCESS);
    const auto v = download<uint32_t>(d, 64);
    for (int k = 0; k < 32; ++k) EXPECT_EQ(v[k], 1u << (31 - k)) << k; // dimension 1: van der Corput
    EXPECT_EQ(0, std::memcmp(v.data(), curand_table(101).data(), 256));
}

TEST(NormalQuantile, InvertsTheNormalCdf) {
    for (double p : {1e-300, 1e-12, 1e-5, 0.01, 0.3, 0.5, 0.7, 0.975, 1 - 1e-9}) {
        const double x = normal_quantile(p);
        EXPECT_NEAR(0.5 * std::erfc(-x / M_SQRT2), p, 1e-15 + 1e-12 * p) << p;
    }
    EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-12);
    EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-15);
}

} // namespace
} // namespace kvmgpu::vgpu::test
