// The host backend's reference kernels for the runtime-API samples
// (sample_kernels.h): results, launch geometry, and guest-chosen parameters
// that point outside device memory or ask for too much work.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kvmtool-gpu/devices/vgpu/backends/host_kernels.h"
#include "kvmtool-gpu/devices/vgpu/backends/sample_kernels.h"

namespace kvmgpu::vgpu::test {
namespace {

// Device memory: one buffer at kBase; anything else is unmapped.
class OneBuffer : public DeviceAddressSpace {
public:
    static constexpr uint64_t kBase = 0x7000'0000'0000ull;
    explicit OneBuffer(size_t bytes) : bytes_(bytes, 0) {}
    uint8_t* translate(uint64_t dptr, uint64_t bytes) const override {
        if (dptr < kBase || dptr - kBase > bytes_.size() || bytes > bytes_.size() - (dptr - kBase)) return nullptr;
        return const_cast<uint8_t*>(bytes_.data()) + (dptr - kBase);
    }
    template <typename T>
    T* at(uint64_t byte_offset) { return reinterpret_cast<T*>(bytes_.data() + byte_offset); }

private:
    std::vector<uint8_t> bytes_;
};

// Kernel parameters as cuLaunchKernel's kernelParams: pointers to values.
struct Params {
    std::vector<std::vector<uint8_t>> values;
    std::vector<void*> ptrs;
    template <typename T>
    Params& add(T v) {
        values.emplace_back(sizeof v);
        std::memcpy(values.back().data(), &v, sizeof v);
        return *this;
    }
    std::span<void* const> span() {
        ptrs.clear();
        for (auto& v : values) ptrs.push_back(v.data());
        return ptrs;
    }
};

constexpr uint64_t B = OneBuffer::kBase;

TEST(SampleKernels, TableFindsEachByMangledNameWithItsParameterSizes) {
    struct Want { const char* mangled; std::vector<uint16_t> sizes; };
    const Want want[] = {{"_Z9vectorAddPKfS0_Pfi", {8, 8, 8, 4}},
                         {"_Z14matrixMulTiledILi32EEvPfPKfS2_ii", {8, 8, 8, 4, 4}},
                         {"_Z9reduceSumPKiPij", {8, 8, 4}},
                         {"_Z5saxpyifPKfPf", {4, 4, 8, 8}},
                         {"_Z11incrementByPiii", {8, 4, 4}}};
    for (const Want& w : want) {
        const int i = find_cpu_kernel(w.mangled);
        ASSERT_GE(i, 0) << w.mangled;
        const auto sizes = cpu_kernels()[i].param_sizes;
        EXPECT_EQ(std::vector<uint16_t>(sizes.begin(), sizes.end()), w.sizes) << w.mangled;
    }
}

TEST(SampleKernels, VectorAddCoversMinOfNAndThreads) {
    OneBuffer mem(3 * 100 * 4);
    for (int i = 0; i < 100; ++i) { mem.at<float>(0)[i] = float(i); mem.at<float>(400)[i] = 0.5f; }
    Params p;
    p.add(B).add(B + 400).add(B + 800).add(int32_t{70});
    ASSERT_EQ(sample_kernels::vector_add_int(mem, {2}, {32}, p.span()), VGPU_SUCCESS); // 64 threads < n
    EXPECT_EQ(mem.at<float>(800)[63], 63.5f);
    EXPECT_EQ(mem.at<float>(800)[64], 0.0f); // no thread for it
    Params neg;
    neg.add(B).add(B).add(B).add(int32_t{-5});
    EXPECT_EQ(sample_kernels::vector_add_int(mem, {1}, {32}, neg.span()), VGPU_SUCCESS); // no element
    Params outside;
    outside.add(B).add(B).add(B + 1200 - 4).add(int32_t{2}); // C's 2nd float is past the buffer
    EXPECT_EQ(sample_kernels::vector_add_int(mem, {1}, {32}, outside.span()), VGPU_ERROR_ILLEGAL_ADDRESS);
}

TEST(SampleKernels, MatrixMulMatchesNaiveProductAndChecksBounds) {
    const int hA = 4, wA = 3, wB = 5; // C is hA x wB
    OneBuffer mem((hA * wB + hA * wA + wA * wB) * 4);
    float* C = mem.at<float>(0);
    float* A = mem.at<float>(hA * wB * 4);
    float* Bm = mem.at<float>((hA * wB + hA * wA) * 4);
    for (int i = 0; i < hA * wA; ++i) A[i] = float(i % 7) - 2.0f;
    for (int i = 0; i < wA * wB; ++i) Bm[i] = 0.25f * float(i);
    Params p;
    p.add(B).add(B + hA * wB * 4).add(B + (hA * wB + hA * wA) * 4).add(int32_t{wA}).add(int32_t{wB});
    ASSERT_EQ(sample_kernels::matrix_mul_tiled(mem, {uint32_t(wB), 1}, {1, uint32_t(hA)}, p.span()), VGPU_SUCCESS);
    for (int r = 0; r < hA; ++r)
        for (int c = 0; c < wB; ++c) {
            float want = 0;
            for (int k = 0; k < wA; ++k) want += A[r * wA + k] * Bm[k * wB + c];
            EXPECT_EQ(C[r * wB + c], want) << r << "," << c;
        }
    // Many more rows of threads than C has: C's range runs past the buffer.
    EXPECT_EQ(sample_kernels::matrix_mul_tiled(mem, {uint32_t(wB), 1}, {1, uint32_t(hA + 20)}, p.span()),
              VGPU_ERROR_ILLEGAL_ADDRESS);
    Params bad_width;
    bad_width.add(B).add(B).add(B).add(int32_t{0}).add(int32_t{wB});
    EXPECT_EQ(sample_kernels::matrix_mul_tiled(mem, {1, 1}, {1, 1}, bad_width.span()), VGPU_ERROR_ILLEGAL_ADDRESS);
    Params huge;
    huge.add(B).add(B).add(B).add(int32_t{1 << 30}).add(int32_t{1});
    EXPECT_EQ(sample_kernels::matrix_mul_tiled(mem, {1024, 1024}, {32, 32}, huge.span()), static_cast<Status>(702));
    // The largest grid a GPU takes, one multiply-add per cell: still too much.
    Params wide;
    wide.add(B).add(B).add(B).add(int32_t{1}).add(int32_t{1});
    EXPECT_EQ(sample_kernels::matrix_mul_tiled(mem, {0x7fffffffu, 65535}, {1024, 1}, wide.span()),
              static_cast<Status>(702));
}

TEST(SampleKernels, ReduceSumWritesEveryBlocksSumWrapping) {
    const uint32_t n = 1000;
    OneBuffer mem(n * 4 + 8 * 4);
    int32_t* in = mem.at<int32_t>(0);
    for (uint32_t i = 0; i < n; ++i) in[i] = int32_t(i);
    in[0] = INT32_MAX; // block 0 wraps, as int addition on a GPU does
    int32_t* out = mem.at<int32_t>(n * 4);
    out[7] = 12345;
    Params p;
    p.add(B).add(B + n * 4).add(n);
    // 128 threads: each block sums 256 elements; 5 blocks, the 5th empty.
    ASSERT_EQ(sample_kernels::reduce_sum(mem, {5}, {128}, p.span()), VGPU_SUCCESS);
    int64_t want0 = INT32_MAX;
    for (int i = 1; i < 256; ++i) want0 += i;
    EXPECT_EQ(out[0], int32_t(uint32_t(want0)));
    int64_t want3 = 0;
    for (int i = 768; i < 1000; ++i) want3 += i;
    EXPECT_EQ(out[3], want3);
    EXPECT_EQ(out[4], 0);
    EXPECT_EQ(out[7], 12345); // no block 7
    Params outside;
    outside.add(B).add(B + n * 4 + 6 * 4).add(n); // 5 partial sums do not fit at the end
    EXPECT_EQ(sample_kernels::reduce_sum(mem, {5}, {128}, outside.span()), VGPU_ERROR_ILLEGAL_ADDRESS);
}

TEST(SampleKernels, SaxpyAndIncrementBy) {
    OneBuffer mem(3 * 64 * 4);
    float* x = mem.at<float>(0);
    float* y = mem.at<float>(256);
    int32_t* d = mem.at<int32_t>(512);
    for (int i = 0; i < 64; ++i) { x[i] = float(i); y[i] = 1.0f; d[i] = i; }
    d[1] = INT32_MAX;
    Params s;
    s.add(int32_t{40}).add(2.0f).add(B).add(B + 256);
    ASSERT_EQ(sample_kernels::saxpy(mem, {1}, {64}, s.span()), VGPU_SUCCESS);
    EXPECT_EQ(y[39], 79.0f);
    EXPECT_EQ(y[40], 1.0f);
    Params inc;
    inc.add(B + 512).add(int32_t{3}).add(int32_t{64});
    ASSERT_EQ(sample_kernels::increment_by(mem, {1}, {32}, inc.span()), VGPU_SUCCESS); // 32 threads
    EXPECT_EQ(d[0], 3);
    EXPECT_EQ(d[1], INT32_MIN + 2); // wraps
    EXPECT_EQ(d[31], 34);
    EXPECT_EQ(d[32], 32);
    Params outside;
    outside.add(B + 512 + 60 * 4).add(int32_t{1}).add(int32_t{8});
    EXPECT_EQ(sample_kernels::increment_by(mem, {1}, {32}, outside.span()), VGPU_ERROR_ILLEGAL_ADDRESS);
}

} // namespace
} // namespace kvmgpu::vgpu::test
